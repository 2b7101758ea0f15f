/**
 * AskUserQuestion's input and the answers the CLI expects back in `updatedInput.answers`:
 * `{ "<question text>": "<label>" }`, several labels joined with ", " for a multi-select.
 */

export interface QuestionOption {
  label: string;
  description?: string;
}

export interface Question {
  question: string;
  header?: string;
  options: QuestionOption[];
  multiSelect: boolean;
}

/** One question's state in the form: chosen labels, and the free "Other" text when ticked. */
export interface QuestionChoice {
  selected: string[];
  otherOn: boolean;
  other: string;
}

export const emptyChoice: QuestionChoice = { selected: [], otherOn: false, other: "" };

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** The questions in a tool input, skipping anything malformed. */
export function readQuestions(input: Record<string, unknown>): Question[] {
  const raw = Array.isArray(input.questions) ? input.questions : [];
  const out: Question[] = [];
  for (const item of raw) {
    if (item === null || typeof item !== "object") continue;
    const q = item as Record<string, unknown>;
    const question = str(q.question);
    if (!question) continue;
    const options = (Array.isArray(q.options) ? q.options : [])
      .map((o): QuestionOption | undefined => {
        if (typeof o === "string") return { label: o };
        if (o === null || typeof o !== "object") return undefined;
        const label = str((o as Record<string, unknown>).label);
        return label ? { label, description: str((o as Record<string, unknown>).description) } : undefined;
      })
      .filter((o): o is QuestionOption => o !== undefined);
    out.push({ question, header: str(q.header), options, multiSelect: q.multiSelect === true });
  }
  return out;
}

/** The answers map, and the questions still without an answer. */
export function buildAnswers(
  questions: readonly Question[],
  choices: ReadonlyMap<string, QuestionChoice>,
): { answers: Record<string, string>; unanswered: string[] } {
  const answers: Record<string, string> = {};
  const unanswered: string[] = [];
  for (const q of questions) {
    const choice = choices.get(q.question) ?? emptyChoice;
    // Labels in the order the question lists them, not the order they were clicked.
    const labels = q.options.map((o) => o.label).filter((label) => choice.selected.includes(label));
    const other = choice.otherOn ? choice.other.trim() : "";
    const parts = q.multiSelect ? [...labels, ...(other ? [other] : [])] : other ? [other] : labels.slice(0, 1);
    if (parts.length === 0) unanswered.push(q.question);
    else answers[q.question] = parts.join(", ");
  }
  return { answers, unanswered };
}
