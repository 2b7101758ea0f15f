"use client";

import { useId, useState } from "react";
import { buildAnswers, emptyChoice, type Question, type QuestionChoice } from "./question-answers";

export interface QuestionFormProps {
  questions: Question[];
  readOnly?: boolean;
  /** Previously given answers (decided cards). */
  answered?: Record<string, string>;
  onAnswersChange?: (result: { answers: Record<string, string>; unanswered: string[] }) => void;
}

/** AskUserQuestion as a form: one fieldset per question, radios or checkboxes, and "Other". */
export function QuestionForm({ questions, readOnly = false, answered, onAnswersChange }: QuestionFormProps) {
  const [choices, setChoices] = useState<Map<string, QuestionChoice>>(() => new Map());

  const update = (question: string, change: (c: QuestionChoice) => QuestionChoice) => {
    const next = new Map(choices);
    next.set(question, change(choices.get(question) ?? emptyChoice));
    setChoices(next);
    onAnswersChange?.(buildAnswers(questions, next));
  };

  if (questions.length === 0) return <p className="text-xs text-zinc-500">The question had no readable content.</p>;
  return (
    <div className="space-y-3">
      {questions.map((q) => (
        <QuestionFieldset
          key={q.question}
          question={q}
          choice={choices.get(q.question) ?? emptyChoice}
          readOnly={readOnly}
          answered={answered?.[q.question]}
          onChange={(c) => update(q.question, c)}
        />
      ))}
    </div>
  );
}

function QuestionFieldset({
  question,
  choice,
  readOnly,
  answered,
  onChange,
}: {
  question: Question;
  choice: QuestionChoice;
  readOnly: boolean;
  answered: string | undefined;
  onChange: (change: (c: QuestionChoice) => QuestionChoice) => void;
}) {
  const name = useId();
  const type = question.multiSelect ? "checkbox" : "radio";
  const pick = (label: string, on: boolean) =>
    onChange((c) =>
      question.multiSelect
        ? { ...c, selected: on ? [...c.selected, label] : c.selected.filter((l) => l !== label) }
        : { ...c, selected: on ? [label] : [], otherOn: false },
    );
  const row =
    "flex cursor-pointer items-start gap-2 rounded px-2 py-1 hover:bg-zinc-50 has-[:checked]:bg-indigo-50 dark:hover:bg-zinc-800/60 dark:has-[:checked]:bg-indigo-950/50";
  return (
    <fieldset
      data-testid="approval-question"
      data-multi={question.multiSelect}
      disabled={readOnly}
      className="rounded-md border border-zinc-200 p-2 dark:border-zinc-800"
    >
      <legend className="px-1 text-sm font-medium">
        {question.header && (
          <span className="mr-2 rounded bg-zinc-100 px-1.5 py-0.5 text-[10px] font-semibold tracking-wide text-zinc-600 uppercase dark:bg-zinc-800 dark:text-zinc-300">
            {question.header}
          </span>
        )}
        {question.question}
        {question.multiSelect && <span className="ml-2 text-xs font-normal text-zinc-500">choose any</span>}
      </legend>
      {answered !== undefined ? (
        <p className="px-2 py-1 text-sm">
          <span className="text-zinc-500">Answered: </span>
          {answered}
        </p>
      ) : (
        <div className="mt-1 grid gap-0.5">
          {question.options.map((o) => (
            <label key={o.label} className={row}>
              <input
                type={type}
                name={name}
                className="mt-0.5 accent-indigo-600"
                checked={choice.selected.includes(o.label) && !(type === "radio" && choice.otherOn)}
                onChange={(e) => pick(o.label, e.target.checked)}
              />
              <span className="text-sm">
                {o.label}
                {o.description && <span className="block text-xs text-zinc-500">{o.description}</span>}
              </span>
            </label>
          ))}
          <label className={row}>
            <input
              type={type}
              name={name}
              className="mt-0.5 accent-indigo-600"
              checked={choice.otherOn}
              onChange={(e) =>
                onChange((c) => ({ ...c, otherOn: e.target.checked, selected: question.multiSelect ? c.selected : [] }))
              }
            />
            <span className="flex-1 text-sm">
              Other
              {choice.otherOn && (
                <input
                  data-testid="approval-question-other"
                  autoFocus
                  value={choice.other}
                  onChange={(e) => onChange((c) => ({ ...c, other: e.target.value }))}
                  placeholder="Your answer"
                  className="mt-1 block w-full max-w-md rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm outline-none focus:border-indigo-500 focus:ring-2 focus:ring-indigo-500/30 dark:border-zinc-700 dark:bg-zinc-900"
                />
              )}
            </span>
          </label>
        </div>
      )}
    </fieldset>
  );
}
