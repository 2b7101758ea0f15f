import { z } from "zod";
import type { JsonObject } from "@/server/shared/claude-protocol/messages";
import type { NotebookCellReview } from "@/server/shared/wire/approval";
import { targetNotebookCell, ZNotebookEditInput } from "./notebook-edit-review";

/**
 * Review of `Edit`, `Write` and `NotebookEdit` requests: what the CLI would write, and the input
 * that makes it write exactly what the approver reviewed instead (design rule 6, "the diff shown
 * is the change applied"). A NotebookEdit is reviewed as one cell's source (see
 * `notebook-edit-review.ts`): the reviewed text becomes `new_source`.
 *
 * Everything here mirrors what CLI 2.1.332 does with the input it runs (read from its bundled
 * source; protocol reference §8):
 * - Edit reads the file with every `\r\n` turned into `\n`, replaces there, and writes the
 *   result back with the file's line endings: CRLF when the first 4096 characters hold more
 *   `\r\n` than bare `\n`, otherwise as is (so a mostly-LF file loses its stray `\r\n`).
 * - Edit without `replace_all` refuses an `old_string` found twice (non-overlapping), and
 *   refuses an edit that changes nothing. An empty `old_string` creates a missing file or
 *   fills an empty (whitespace-only) one.
 * - When `new_string` is empty and `old_string` does not end in `\n`, Edit deletes
 *   `old_string + "\n"` if the file contains it, taking the line break with it.
 * - Edit falls back to curly-quote-insensitive matching and then restyles `new_string`'s
 *   quotes; its `\uXXXX`-escape fallback is not modelled (such a proposal is reported as a
 *   problem, and the card falls back to showing the raw strings).
 * - Write writes `content` byte for byte, line endings included; only a byte-order mark of
 *   the existing file is kept when `content` has none.
 * The text passed in as the file's current content must be the raw text on disk (decoded,
 * not line-ending normalised), or CRLF files are modelled wrong.
 *
 * The permission answer can only change the *input* of the tool that asked (the CLI checks
 * `updatedInput` against that tool's schema), never switch an Edit to a Write. So a reviewed
 * Edit stays an Edit: the smallest span around every change that occurs once in the file,
 * growing line by line, and at worst the whole file as `old_string` (unique by definition
 * when non-empty). An empty or missing file gets `old_string: ""`, the CLI's own create path.
 */

/** The file tools whose requests are reviewed as a diff. */
export const FileTool = { edit: "Edit", write: "Write", notebookEdit: "NotebookEdit" } as const;
/** One of {@link FileTool}. */
export type FileTool = (typeof FileTool)[keyof typeof FileTool];

/** True for the tools {@link proposeFileChange} understands. */
export function isReviewableFileTool(toolName: string): toolName is FileTool {
  return toolName === FileTool.edit || toolName === FileTool.write || toolName === FileTool.notebookEdit;
}

/** The path a file tool's input names (`notebook_path` for NotebookEdit), "" when it names none. */
export function reviewedFilePath(toolName: FileTool, input: JsonObject): string {
  const value = toolName === FileTool.notebookEdit ? input.notebook_path : input.file_path;
  return typeof value === "string" ? value : "";
}

/** `Edit` input (extra fields the CLI adds are kept when rewriting). */
export const ZEditInput = z.looseObject({
  file_path: z.string().min(1),
  old_string: z.string(),
  new_string: z.string(),
  replace_all: z.boolean().optional(),
});
/** `Edit` input. */
export type EditInput = z.infer<typeof ZEditInput>;

/** `Write` input. */
export const ZWriteInput = z.looseObject({ file_path: z.string().min(1), content: z.string() });
/** `Write` input. */
export type WriteInput = z.infer<typeof ZWriteInput>;

/** The line endings the CLI writes an edited file back with. */
export type LineEndings = "LF" | "CRLF";

/** What the CLI would write, or why it would refuse. */
export type ApplyOutcome = { ok: true; text: string } | { ok: false; problem: string };

/** The diff to show: the file (NotebookEdit: the cell) now against what the tool would leave. */
export type FileProposal =
  | {
      ok: true;
      tool: FileTool;
      filePath: string;
      /** False when the file (NotebookEdit: the cell) does not exist (the left side is then empty). */
      exists: boolean;
      /** Left side: the file's text, or "" when missing. */
      original: string;
      /** Right side: the file's text after the tool runs. */
      proposed: string;
      /** NotebookEdit: the cell whose source both sides are. */
      cell?: NotebookCellReview;
    }
  | { ok: false; tool: FileTool; filePath: string | null; problem: string };

/** How {@link buildReviewedInput} reached the reviewed text. */
export const ReviewStrategy = {
  /** The reviewed text is the proposal: the model's input is sent unchanged. */
  asProposed: "as-proposed",
  /** Edit: the smallest unique span around the changes. */
  span: "span",
  /** Edit: the whole file as `old_string` (no smaller unique span). */
  wholeFile: "whole-file",
  /** Edit: `old_string: ""` on a missing or empty file. */
  create: "create",
  /** Write: `content` is the reviewed text. */
  content: "content",
  /** NotebookEdit: `new_source` is the reviewed text. */
  newSource: "new-source",
} as const;
/** One of {@link ReviewStrategy}. */
export type ReviewStrategy = (typeof ReviewStrategy)[keyof typeof ReviewStrategy];

/** Why no input can make the CLI write the reviewed text. */
export const ReviewProblem = {
  /** The input is not an Edit/Write/NotebookEdit input. */
  invalidInput: "invalid-input",
  /** NotebookEdit: the notebook cannot be read, or the cell is not in it. */
  notebookCell: "notebook-cell",
  /** NotebookEdit delete: a cell can only be deleted whole; the reviewed text must stay empty. */
  deleteEdited: "delete-edited",
  /** Edit: the reviewed text equals the file; the CLI refuses an edit that changes nothing. */
  noChange: "no-change",
  /** Edit on a CRLF file: the reviewed text has line endings the CLI cannot write. */
  lineEndings: "line-endings",
  /** Write: the file has a byte-order mark that the CLI keeps, the reviewed text has none. */
  byteOrderMark: "byte-order-mark",
} as const;
/** One of {@link ReviewProblem}. */
export type ReviewProblem = (typeof ReviewProblem)[keyof typeof ReviewProblem];

/** The input to send with `allow`, or why there is none. */
export type ReviewedInput =
  | {
      ok: true;
      updatedInput: JsonObject;
      strategy: ReviewStrategy;
      /** The approver changed the proposal (the record then keeps both versions). */
      userModified: boolean;
    }
  | { ok: false; code: ReviewProblem; problem: string };

const BOM = 0xfeff;

/** The CLI's line-ending detection: more `\r\n` than bare `\n` in the first 4096 characters. */
export function detectLineEndings(raw: string): LineEndings {
  const head = raw.slice(0, 4096);
  let crlf = 0;
  let lf = 0;
  for (let i = 0; i < head.length; i++) {
    if (head[i] !== "\n") continue;
    if (i > 0 && head[i - 1] === "\r") crlf++;
    else lf++;
  }
  return crlf > lf ? "CRLF" : "LF";
}

function normalizeLineEndings(raw: string): string {
  return raw.replaceAll("\r\n", "\n");
}

function withLineEndings(text: string, endings: LineEndings): string {
  if (endings === "LF") return text;
  return text.replaceAll("\r\n", "\n").split("\n").join("\r\n");
}

/** The text `Edit` leaves on disk given the file's raw text (null when missing). */
export function applyCliEdit(disk: string | null, input: EditInput): ApplyOutcome {
  const oldString = input.old_string;
  const newString = input.new_string;
  const replaceAll = input.replace_all ?? false;
  if (oldString === newString) {
    return fail("No changes to make: old_string and new_string are exactly the same.");
  }
  if (disk === null) {
    if (oldString !== "") return fail("File does not exist; only an empty old_string creates a file with Edit.");
    return { ok: true, text: newString };
  }
  const endings = detectLineEndings(disk);
  const text = normalizeLineEndings(disk);
  if (oldString === "") {
    if (text.trim() !== "") return fail("Cannot create new file - file already exists.");
    if (text === "" && newString === "") return { ok: true, text: "" };
    const result = keepByteOrderMark(text, newString);
    if (result === text) return fail("String not found in file. Failed to apply edit.");
    return { ok: true, text: withLineEndings(result, endings) };
  }
  if (input.file_path.endsWith(".ipynb")) {
    return fail("File is a Jupyter Notebook. Use the NotebookEdit tool to edit this file.");
  }
  const actual = findActualString(text, oldString);
  if (actual === null) return fail(`String to replace not found in file.\nString: ${oldString}`);
  if (!replaceAll && occursTwice(text, actual)) {
    return fail(
      `Found ${text.split(actual).length - 1} matches of the string to replace, but replace_all is false. ` +
        `To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide ` +
        `more context to uniquely identify the instance.\nString: ${oldString}`,
    );
  }
  const result = replaceLikeCli(text, actual, preserveQuoteStyle(oldString, actual, newString), replaceAll);
  if (result === text) return fail("String not found in file. Failed to apply edit.");
  return { ok: true, text: withLineEndings(result, endings) };
}

/** The text `Write` leaves on disk given the file's raw text (null when missing). */
export function applyCliWrite(disk: string | null, input: WriteInput): string {
  return keepByteOrderMark(disk, input.content);
}

/** The diff to show for an Edit, Write or NotebookEdit request, given the file's raw text (null when missing). */
export function proposeFileChange(toolName: FileTool, input: JsonObject, disk: string | null): FileProposal {
  const filePath = reviewedFilePath(toolName, input) || null;
  const base = { exists: disk !== null, original: disk ?? "" };
  if (toolName === FileTool.notebookEdit) {
    const parsed = ZNotebookEditInput.safeParse(input);
    if (!parsed.success)
      return { ok: false, tool: toolName, filePath, problem: describeInvalid("NotebookEdit", parsed.error) };
    const target = targetNotebookCell(disk, parsed.data);
    if (!target.ok) return { ok: false, tool: toolName, filePath, problem: target.problem };
    return {
      ok: true,
      tool: toolName,
      filePath: parsed.data.notebook_path,
      exists: target.original !== null,
      original: target.original ?? "",
      proposed: target.proposed,
      cell: target.cell,
    };
  }
  if (toolName === FileTool.write) {
    const parsed = ZWriteInput.safeParse(input);
    if (!parsed.success)
      return { ok: false, tool: toolName, filePath, problem: describeInvalid("Write", parsed.error) };
    return {
      ok: true,
      tool: toolName,
      filePath: parsed.data.file_path,
      ...base,
      proposed: applyCliWrite(disk, parsed.data),
    };
  }
  const parsed = ZEditInput.safeParse(input);
  if (!parsed.success) return { ok: false, tool: toolName, filePath, problem: describeInvalid("Edit", parsed.error) };
  const outcome = applyCliEdit(disk, parsed.data);
  if (!outcome.ok) return { ok: false, tool: toolName, filePath: parsed.data.file_path, problem: outcome.problem };
  return { ok: true, tool: toolName, filePath: parsed.data.file_path, ...base, proposed: outcome.text };
}

/**
 * The `updatedInput` that makes the CLI leave exactly `reviewed` on disk, given the file's raw
 * text (null when missing) and the request's input. Every Edit/Write input returned has been
 * checked by applying it with the CLI's own rules ({@link applyCliEdit}, {@link applyCliWrite});
 * a NotebookEdit's cell gets `new_source` verbatim, so `reviewed` becomes the cell's source.
 */
export function buildReviewedInput(args: {
  toolName: FileTool;
  input: JsonObject;
  disk: string | null;
  reviewed: string;
}): ReviewedInput {
  const { toolName, input, disk, reviewed } = args;
  if (toolName === FileTool.notebookEdit) {
    const parsed = ZNotebookEditInput.safeParse(input);
    if (!parsed.success) return problem(ReviewProblem.invalidInput, describeInvalid("NotebookEdit", parsed.error));
    const target = targetNotebookCell(disk, parsed.data);
    if (!target.ok) return problem(ReviewProblem.notebookCell, target.problem);
    if (target.proposed === reviewed) {
      return { ok: true, updatedInput: input, strategy: ReviewStrategy.asProposed, userModified: false };
    }
    if (target.cell.editMode === "delete") {
      return problem(
        ReviewProblem.deleteEdited,
        "NotebookEdit deletes the whole cell; its text cannot be changed. Allow the deletion or deny it.",
      );
    }
    // The CLI writes `new_source` into the cell as it is: the reviewed text is the cell's source.
    const updated = { ...parsed.data, new_source: reviewed };
    return { ok: true, updatedInput: updated, strategy: ReviewStrategy.newSource, userModified: true };
  }
  if (toolName === FileTool.write) {
    const parsed = ZWriteInput.safeParse(input);
    if (!parsed.success) return problem(ReviewProblem.invalidInput, describeInvalid("Write", parsed.error));
    if (applyCliWrite(disk, parsed.data) === reviewed) {
      return { ok: true, updatedInput: input, strategy: ReviewStrategy.asProposed, userModified: false };
    }
    const updated = { ...parsed.data, content: reviewed };
    if (applyCliWrite(disk, updated) !== reviewed) {
      return problem(
        ReviewProblem.byteOrderMark,
        "The file starts with a byte-order mark, which Write keeps; the reviewed text must keep it too.",
      );
    }
    return { ok: true, updatedInput: updated, strategy: ReviewStrategy.content, userModified: true };
  }

  const parsed = ZEditInput.safeParse(input);
  if (!parsed.success) return problem(ReviewProblem.invalidInput, describeInvalid("Edit", parsed.error));
  const proposal = applyCliEdit(disk, parsed.data);
  if (proposal.ok && proposal.text === reviewed) {
    return { ok: true, updatedInput: input, strategy: ReviewStrategy.asProposed, userModified: false };
  }
  const rewrite = (oldString: string, newString: string): EditInput => ({
    ...parsed.data,
    old_string: oldString,
    new_string: newString,
    replace_all: false,
  });
  const accept = (candidate: EditInput, strategy: ReviewStrategy): ReviewedInput | null => {
    const outcome = applyCliEdit(disk, candidate);
    if (!outcome.ok || outcome.text !== reviewed) return null;
    return { ok: true, updatedInput: candidate, strategy, userModified: true };
  };

  if (disk === null) {
    return (
      accept(rewrite("", reviewed), ReviewStrategy.create) ??
      problem(ReviewProblem.noChange, "The reviewed text cannot be written as a new file by Edit.")
    );
  }
  const endings = detectLineEndings(disk);
  const text = normalizeLineEndings(disk);
  const target = endings === "CRLF" ? normalizeLineEndings(reviewed) : reviewed;
  if (withLineEndings(target, endings) !== reviewed) {
    return problem(
      ReviewProblem.lineEndings,
      "The file uses CRLF line endings and Edit writes every line break as CRLF; the reviewed text has other line breaks.",
    );
  }
  if (target === text) {
    return problem(
      ReviewProblem.noChange,
      "The reviewed text leaves the file as it is; Edit refuses an edit that changes nothing. Deny the request instead.",
    );
  }
  if (text === "") {
    return (
      accept(rewrite("", target), ReviewStrategy.create) ??
      problem(ReviewProblem.noChange, "The reviewed text cannot be written into the empty file by Edit.")
    );
  }
  for (const [start, end] of candidateSpans(text, target)) {
    const oldString = text.slice(start, end);
    if (oldString === "" || !occursOnlyAt(text, oldString, start)) continue;
    const newString = target.slice(start, target.length - (text.length - end));
    const whole = start === 0 && end === text.length;
    const found = accept(rewrite(oldString, newString), whole ? ReviewStrategy.wholeFile : ReviewStrategy.span);
    if (found) return found;
  }
  // Unreachable: the whole file is the last candidate and always applies. Kept as a clear
  // refusal rather than a wrong answer should the CLI model above ever change.
  return problem(ReviewProblem.noChange, "No Edit input reproduces the reviewed text.");
}

// ---------------------------------------------------------------------------------------------

/** Context lines (above and below together) tried before falling back to the whole file. */
const MAX_CONTEXT_LINES = 24;

/**
 * Spans of `text` (start, end) covering every difference with `target`, smallest first: the
 * exact changed characters, then whole lines, then whole lines with c = 1, 2, … lines of
 * context split every way between below and above (below first), and finally the whole text.
 */
function* candidateSpans(text: string, target: string): Generator<[number, number]> {
  let prefix = 0;
  const limit = Math.min(text.length, target.length);
  while (prefix < limit && text.charCodeAt(prefix) === target.charCodeAt(prefix)) prefix++;
  let suffix = 0;
  while (
    suffix < limit - prefix &&
    text.charCodeAt(text.length - 1 - suffix) === target.charCodeAt(target.length - 1 - suffix)
  ) {
    suffix++;
  }
  // Never cut a surrogate pair: the strings travel as JSON and must stay well-formed.
  if (prefix > 0 && isHighSurrogate(text.charCodeAt(prefix - 1))) prefix--;
  if (suffix > 0 && isLowSurrogate(text.charCodeAt(text.length - suffix))) suffix--;

  const start = prefix;
  const end = text.length - suffix;
  yield [start, end];

  // starts[u]: the span start with u lines of context above; ends[d]: the end with d below.
  const starts = [lineStart(text, start)];
  const ends = [atLineBoundary(text, end) ? end : lineEndAfter(text, end)];
  while (starts.length <= MAX_CONTEXT_LINES && starts[starts.length - 1]! > 0) {
    starts.push(lineStart(text, starts[starts.length - 1]! - 1));
  }
  while (ends.length <= MAX_CONTEXT_LINES && ends[ends.length - 1]! < text.length) {
    ends.push(lineEndAfter(text, ends[ends.length - 1]!));
  }
  for (let context = 0; context <= MAX_CONTEXT_LINES; context++) {
    for (let above = 0; above <= context; above++) {
      const s = starts[above];
      const e = ends[context - above];
      if (s !== undefined && e !== undefined) yield [s, e];
    }
  }
  yield [0, text.length];
}

/** The start of the line that position `index` belongs to. */
function lineStart(text: string, index: number): number {
  return index <= 0 ? 0 : text.lastIndexOf("\n", index - 1) + 1;
}

/** True when position `index` is at the start of a line or at either end of the text. */
function atLineBoundary(text: string, index: number): boolean {
  return index === 0 || index === text.length || text[index - 1] === "\n";
}

/** The index just past the line break that ends the line starting at or containing `index`. */
function lineEndAfter(text: string, index: number): number {
  const nl = text.indexOf("\n", index);
  return nl === -1 ? text.length : nl + 1;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Stricter than the CLI's check (which ignores overlapping repeats): no other occurrence at all. */
function occursOnlyAt(text: string, needle: string, index: number): boolean {
  return text.indexOf(needle) === index && text.indexOf(needle, index + 1) === -1;
}

/** The CLI's ambiguity check: a second, non-overlapping occurrence. */
function occursTwice(text: string, needle: string): boolean {
  const first = text.indexOf(needle);
  return first !== -1 && text.indexOf(needle, first + needle.length) !== -1;
}

/** The CLI's replacement, including its habit of taking a line break along with a deletion. */
function replaceLikeCli(text: string, oldString: string, newString: string, all: boolean): string {
  const withBreak = newString === "" && !oldString.endsWith("\n") ? `${oldString}\n` : undefined;
  const needle = withBreak !== undefined && text.includes(withBreak) ? withBreak : oldString;
  return all ? text.replaceAll(needle, () => newString) : text.replace(needle, () => newString);
}

function keepByteOrderMark(existing: string | null, content: string): string {
  if (content !== "" && existing?.charCodeAt(0) === BOM && content.charCodeAt(0) !== BOM) {
    return `\uFEFF${content}`;
  }
  return content;
}

const LEFT_SINGLE = "\u2018";
const RIGHT_SINGLE = "\u2019";
const LEFT_DOUBLE = "\u201C";
const RIGHT_DOUBLE = "\u201D";

function straightenQuotes(s: string): string {
  return s
    .replaceAll(LEFT_SINGLE, "'")
    .replaceAll(RIGHT_SINGLE, "'")
    .replaceAll(LEFT_DOUBLE, '"')
    .replaceAll(RIGHT_DOUBLE, '"');
}

/** The text in the file that `oldString` designates: itself, or its curly-quoted twin. */
function findActualString(text: string, oldString: string): string | null {
  if (text.includes(oldString)) return oldString;
  const index = straightenQuotes(text).indexOf(straightenQuotes(oldString));
  return index === -1 ? null : text.substring(index, index + oldString.length);
}

/** When the match needed curly quotes, the CLI gives `newString` the same quote style. */
function preserveQuoteStyle(oldString: string, actual: string, newString: string): string {
  if (oldString === actual) return newString;
  const doubles = actual.includes(LEFT_DOUBLE) || actual.includes(RIGHT_DOUBLE);
  const singles = actual.includes(LEFT_SINGLE) || actual.includes(RIGHT_SINGLE);
  let result = newString;
  if (doubles) result = curlDoubleQuotes(result);
  if (singles) result = curlSingleQuotes(result);
  return result;
}

function opensQuote(chars: readonly string[], index: number): boolean {
  if (index === 0) return true;
  return [" ", "\t", "\n", "\r", "(", "[", "{", "\u2014", "\u2013"].includes(chars[index - 1]!);
}

function curlDoubleQuotes(s: string): string {
  const chars = [...s];
  return chars.map((c, i) => (c === '"' ? (opensQuote(chars, i) ? LEFT_DOUBLE : RIGHT_DOUBLE) : c)).join("");
}

function curlSingleQuotes(s: string): string {
  const chars = [...s];
  const letter = /\p{L}/u;
  return chars
    .map((c, i) => {
      if (c !== "'") return c;
      const before = chars[i - 1];
      const after = chars[i + 1];
      if (before !== undefined && after !== undefined && letter.test(before) && letter.test(after)) return RIGHT_SINGLE;
      return opensQuote(chars, i) ? LEFT_SINGLE : RIGHT_SINGLE;
    })
    .join("");
}

function fail(problem: string): ApplyOutcome {
  return { ok: false, problem };
}

function problem(code: ReviewProblem, text: string): ReviewedInput {
  return { ok: false, code, problem: text };
}

function describeInvalid(tool: string, error: z.ZodError): string {
  const issues = error.issues.map((i) => `${i.path.join(".") || "(input)"}: ${i.message}`).join("; ");
  return `Not a valid ${tool} input: ${issues}`;
}
