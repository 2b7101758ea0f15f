/**
 * The data behind a tool card's diff: rows of a line diff, and inside a changed line that has a
 * counterpart on the other side, the words that changed. Pure (jsdiff only), so the renderer
 * draws what these functions say and the unit tests check exactly that.
 *
 * Sources, best first: the CLI's own `structuredPatch` (the tool result's `tool_use_result`,
 * protocol reference §8), the original file it gives with it, then the tool's input alone.
 */
import { diffLines, diffWordsWithSpace } from "diff";

/** A piece of a changed line; `changed` marks the words that differ from the paired line. */
export interface DiffSegment {
  text: string;
  changed: boolean;
}

export interface DiffRow {
  type: "context" | "add" | "del" | "gap";
  text: string;
  /** Line numbers (1-based) in the old / new text, where known. */
  oldLine?: number;
  newLine?: number;
  /** Word-level segments for an add/del row that has a paired row on the other side. */
  segments?: DiffSegment[];
}

export interface DiffStats {
  added: number;
  removed: number;
}

/** Past this many characters on a line, the word diff is skipped (the line is marked whole). */
const maxWordDiffChars = 2_000;
/** Past this many rows, a diff is cut (the rest counted, not drawn). */
export const maxDiffRows = 2_000;

function splitLines(value: string): string[] {
  const lines = value.split("\n");
  if (lines.length > 0 && lines.at(-1) === "") lines.pop();
  return lines;
}

/** The words of `oldLine` and `newLine` that differ: one segment list per side. */
export function wordSegments(oldLine: string, newLine: string): { old: DiffSegment[]; new: DiffSegment[] } {
  if (oldLine.length > maxWordDiffChars || newLine.length > maxWordDiffChars) {
    return { old: [{ text: oldLine, changed: true }], new: [{ text: newLine, changed: true }] };
  }
  const before: DiffSegment[] = [];
  const after: DiffSegment[] = [];
  for (const part of diffWordsWithSpace(oldLine, newLine)) {
    if (part.added) after.push({ text: part.value, changed: true });
    else if (part.removed) before.push({ text: part.value, changed: true });
    else {
      before.push({ text: part.value, changed: false });
      after.push({ text: part.value, changed: false });
    }
  }
  return { old: merge(before), new: merge(after) };
}

function merge(segments: DiffSegment[]): DiffSegment[] {
  const out: DiffSegment[] = [];
  for (const s of segments) {
    const last = out.at(-1);
    if (last && last.changed === s.changed) last.text += s.text;
    else if (s.text !== "") out.push({ ...s });
  }
  return out;
}

/**
 * Pairs each run of removed lines with the run of added lines after it, line by line, and gives
 * each pair its word segments; unpaired lines stay whole.
 */
function markWords(rows: DiffRow[]): DiffRow[] {
  let i = 0;
  while (i < rows.length) {
    if (rows[i]!.type !== "del") {
      i++;
      continue;
    }
    const delStart = i;
    while (i < rows.length && rows[i]!.type === "del") i++;
    const addStart = i;
    while (i < rows.length && rows[i]!.type === "add") i++;
    const pairs = Math.min(addStart - delStart, i - addStart);
    for (let k = 0; k < pairs; k++) {
      const del = rows[delStart + k]!;
      const add = rows[addStart + k]!;
      const words = wordSegments(del.text, add.text);
      // A line replaced whole has nothing in common: marking every word adds nothing.
      if (words.old.some((s) => !s.changed) || words.new.some((s) => !s.changed)) {
        del.segments = words.old;
        add.segments = words.new;
      }
    }
  }
  return rows;
}

/** A line diff of two texts, with word marks inside paired changed lines. */
export function diffTexts(oldText: string, newText: string): DiffRow[] {
  const rows: DiffRow[] = [];
  let oldLine = 1;
  let newLine = 1;
  for (const part of diffLines(oldText, newText)) {
    for (const text of splitLines(part.value)) {
      if (rows.length >= maxDiffRows) break;
      if (part.added) rows.push({ type: "add", text, newLine: newLine++ });
      else if (part.removed) rows.push({ type: "del", text, oldLine: oldLine++ });
      else rows.push({ type: "context", text, oldLine: oldLine++, newLine: newLine++ });
    }
  }
  return markWords(rows);
}

/** Keeps `context` lines of unchanged text around each change; longer unchanged runs become a gap row. */
export function withContext(rows: DiffRow[], context = 3): DiffRow[] {
  const keep = rows.map(() => false);
  rows.forEach((row, i) => {
    if (row.type === "context") return;
    for (let k = Math.max(0, i - context); k <= Math.min(rows.length - 1, i + context); k++) keep[k] = true;
  });
  const out: DiffRow[] = [];
  let skipped = 0;
  rows.forEach((row, i) => {
    if (keep[i]) {
      if (skipped > 0) out.push({ type: "gap", text: `${skipped} unchanged line${skipped === 1 ? "" : "s"}` });
      skipped = 0;
      out.push(row);
    } else skipped++;
  });
  if (skipped > 0 && out.length > 0)
    out.push({ type: "gap", text: `${skipped} unchanged line${skipped === 1 ? "" : "s"}` });
  return out;
}

export interface PatchHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

/** Reads the CLI's `structuredPatch` loosely: hunks with numeric starts and string lines, else undefined. */
export function readStructuredPatch(value: unknown): PatchHunk[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const hunks: PatchHunk[] = [];
  for (const raw of value) {
    if (raw === null || typeof raw !== "object") return undefined;
    const h = raw as Record<string, unknown>;
    if (typeof h.oldStart !== "number" || typeof h.newStart !== "number" || !Array.isArray(h.lines)) return undefined;
    hunks.push({
      oldStart: h.oldStart,
      oldLines: typeof h.oldLines === "number" ? h.oldLines : 0,
      newStart: h.newStart,
      newLines: typeof h.newLines === "number" ? h.newLines : 0,
      lines: h.lines.filter((l): l is string => typeof l === "string"),
    });
  }
  return hunks;
}

/** Rows of a structured patch (`-old`, `+new`, ` context` lines), a gap row between hunks. */
export function patchRows(hunks: readonly PatchHunk[]): DiffRow[] {
  const rows: DiffRow[] = [];
  hunks.forEach((hunk, index) => {
    if (index > 0) rows.push({ type: "gap", text: `@@ -${hunk.oldStart} +${hunk.newStart} @@` });
    let oldLine = hunk.oldStart;
    let newLine = hunk.newStart;
    for (const line of hunk.lines) {
      if (rows.length >= maxDiffRows) break;
      const mark = line[0];
      const text = line.slice(1);
      if (mark === "+") rows.push({ type: "add", text, newLine: newLine++ });
      else if (mark === "-") rows.push({ type: "del", text, oldLine: oldLine++ });
      else if (mark === "\\")
        continue; // "\ No newline at end of file"
      else rows.push({ type: "context", text, oldLine: oldLine++, newLine: newLine++ });
    }
  });
  return markWords(rows);
}

export function diffStats(rows: readonly DiffRow[]): DiffStats {
  let added = 0;
  let removed = 0;
  for (const r of rows) {
    if (r.type === "add") added++;
    else if (r.type === "del") removed++;
  }
  return { added, removed };
}

type Json = Record<string, unknown>;

function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** One file change a tool card draws: the file, the rows, whether the file is new. */
export interface FileDiff {
  path: string;
  rows: DiffRow[];
  created: boolean;
  /** Where the rows came from: the CLI's patch, the original file, or the tool's input alone. */
  source: "patch" | "file" | "input";
}

/**
 * The diff of a file-changing tool call (Edit, MultiEdit, Write, NotebookEdit), from its result's
 * structured output where the CLI gave one, else from its input. Undefined for other tools.
 */
export function fileToolDiff(name: string, input: unknown, structured: unknown): FileDiff | undefined {
  const i = asObject(input) ?? {};
  const out = asObject(structured);
  const path = str(i.file_path) ?? str(i.notebook_path) ?? str(out?.filePath) ?? str(out?.notebook_path) ?? "";
  const patch = readStructuredPatch(out?.structuredPatch);
  switch (name) {
    case "Edit": {
      if (patch && patch.length > 0) return { path, rows: patchRows(patch), created: false, source: "patch" };
      const oldString = str(i.old_string);
      const newString = str(i.new_string);
      if (oldString === undefined || newString === undefined) return undefined;
      return { path, rows: diffTexts(oldString, newString), created: false, source: "input" };
    }
    case "MultiEdit": {
      if (patch && patch.length > 0) return { path, rows: patchRows(patch), created: false, source: "patch" };
      const edits = Array.isArray(i.edits) ? i.edits.map(asObject) : [];
      const rows: DiffRow[] = [];
      edits.forEach((edit, n) => {
        if (!edit) return;
        if (n > 0) rows.push({ type: "gap", text: `edit ${n + 1}` });
        rows.push(...diffTexts(str(edit.old_string) ?? "", str(edit.new_string) ?? ""));
      });
      return { path, rows, created: false, source: "input" };
    }
    case "Write": {
      const content = str(i.content) ?? str(out?.content);
      if (content === undefined) return undefined;
      const original = str(out?.originalFile);
      if (out?.type === "create" || (out && out.originalFile === null))
        return { path, rows: diffTexts("", content), created: true, source: "file" };
      if (original !== undefined)
        return { path, rows: withContext(diffTexts(original, content)), created: false, source: "file" };
      if (patch && patch.length > 0) return { path, rows: patchRows(patch), created: false, source: "patch" };
      // No result yet (or an error): all we know is the new content.
      return { path, rows: diffTexts("", content), created: true, source: "input" };
    }
    case "NotebookEdit": {
      const newSource = str(i.new_source) ?? str(out?.new_source) ?? "";
      const oldSource = str(out?.old_source);
      const mode = str(i.edit_mode) ?? str(out?.edit_mode);
      if (mode === "delete") return { path, rows: diffTexts(oldSource ?? "", ""), created: false, source: "file" };
      if (oldSource !== undefined && mode !== "insert")
        return { path, rows: diffTexts(oldSource, newSource), created: false, source: "file" };
      return { path, rows: diffTexts("", newSource), created: mode === "insert", source: "input" };
    }
    default:
      return undefined;
  }
}
