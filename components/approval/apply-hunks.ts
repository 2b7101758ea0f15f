/**
 * Partial acceptance of a file review, on the client: rebuild the proposed side from the file
 * on disk with only some of the server's hunks applied.
 *
 * Lines are the pieces of `text.split("\n")`, so a trailing newline is a last empty line; the
 * hunks' `oldStart`/`newStart` are 1-based. Where a hunk lands is worked out from the side
 * whose range is not empty (an empty range's start means "after line N" in unified diffs and
 * "at line N" elsewhere; the other side never has that ambiguity), then checked against the
 * hunk's `removed` lines, so a position that is off by one still lands on the right text.
 */
import type { WireHunk } from "@/server/shared/wire/approval";

type Hunk = Pick<WireHunk, "id" | "oldStart" | "oldLines" | "newStart" | "newLines" | "removed" | "added">;

function splitLines(text: string): string[] {
  return text.split("\n");
}

function blockAt(lines: readonly string[], at: number, block: readonly string[]): boolean {
  if (at < 0 || at + block.length > lines.length) return false;
  return block.every((line, i) => lines[at + i] === line);
}

/** The index nearest to `expected` where `block` sits in `lines`, or undefined. */
function findBlock(lines: readonly string[], expected: number, block: readonly string[]): number | undefined {
  if (block.length === 0) return Math.min(Math.max(expected, 0), lines.length);
  for (let d = 0; d <= lines.length; d++) {
    if (blockAt(lines, expected - d, block)) return expected - d;
    if (d > 0 && blockAt(lines, expected + d, block)) return expected + d;
  }
  return undefined;
}

/** Where each hunk starts in the original (0-based), from its own numbers. */
function originalIndex(hunk: Hunk, shiftBefore: number): number {
  if (hunk.oldLines > 0) return hunk.oldStart - 1;
  // A pure insertion: its new-side start is unambiguous; undo the shift of the hunks before it.
  return hunk.newStart - 1 - shiftBefore;
}

/** A hunk that could not be placed on the text it was meant for. */
export class HunkMismatchError extends Error {
  constructor(readonly hunkId: string) {
    super(`The change ${hunkId} no longer matches the file.`);
    this.name = "HunkMismatchError";
  }
}

/**
 * The original with only the accepted hunks applied. With every hunk accepted this is the
 * proposal; with none, the original. Throws {@link HunkMismatchError} when a hunk's removed
 * lines are not in the original.
 */
export function applyHunks(original: string, hunks: readonly Hunk[], accepted: ReadonlySet<string>): string {
  const lines = splitLines(original);
  const ordered = [...hunks].sort((a, b) => a.newStart - b.newStart || a.oldStart - b.oldStart);
  // Place every hunk on the original first (positions do not move while we only look).
  const placed: Array<{ hunk: Hunk; at: number }> = [];
  let shift = 0;
  let floor = 0;
  for (const hunk of ordered) {
    const expected = originalIndex(hunk, shift);
    const at = findBlock(lines.slice(floor), expected - floor, hunk.removed);
    if (at === undefined) throw new HunkMismatchError(hunk.id);
    placed.push({ hunk, at: at + floor });
    floor = at + floor + hunk.removed.length;
    shift += hunk.added.length - hunk.removed.length;
  }
  // Then splice from the bottom up, so earlier indexes stay valid.
  const out = [...lines];
  for (const { hunk, at } of placed.reverse()) {
    if (accepted.has(hunk.id)) out.splice(at, hunk.removed.length, ...hunk.added);
  }
  return out.join("\n");
}

/**
 * Turns one hunk on or off in text the approver may have edited by hand, keeping their other
 * edits: the hunk's current block (its added lines when on, its removed lines when off) is
 * looked for near where it would be, and swapped. Returns undefined when that block is gone
 * (the approver edited inside it); the caller then rebuilds with {@link applyHunks}.
 */
export function toggleHunk(
  current: string,
  original: string,
  hunks: readonly Hunk[],
  accepted: ReadonlySet<string>,
  hunkId: string,
  accept: boolean,
): string | undefined {
  const hunk = hunks.find((h) => h.id === hunkId);
  if (!hunk) return undefined;
  if (accepted.has(hunkId) === accept) return current;
  // Where the hunk sits in the rebuilt text without hand edits: the original position, moved by
  // the accepted hunks above it.
  let shift = 0;
  let originalShift = 0;
  for (const h of [...hunks].sort((a, b) => a.newStart - b.newStart)) {
    if (h.id === hunkId) break;
    originalShift += h.added.length - h.removed.length;
    if (accepted.has(h.id)) shift += h.added.length - h.removed.length;
  }
  const lines = splitLines(current);
  const expected = originalIndex(hunk, originalShift) + shift;
  const [from, to] = accept ? [hunk.removed, hunk.added] : [hunk.added, hunk.removed];
  if (from.length === 0) {
    // Re-inserting lines: anchor on the line before or after the hunk in the original.
    const originalLines = splitLines(original);
    const origAt = originalIndex(hunk, originalShift);
    const before = originalLines[origAt - 1];
    const after = originalLines[origAt];
    let at: number | undefined;
    if (before !== undefined) {
      const b = findBlock(lines, expected - 1, [before]);
      if (b !== undefined) at = b + 1;
    } else if (after !== undefined) {
      at = findBlock(lines, expected, [after]);
    } else {
      at = 0;
    }
    if (at === undefined) return undefined;
    lines.splice(at, 0, ...to);
    return lines.join("\n");
  }
  const at = findBlock(lines, expected, from);
  if (at === undefined) return undefined;
  lines.splice(at, from.length, ...to);
  return lines.join("\n");
}

/** The file's language for Monaco, from its extension. */
export function languageForPath(path: string): string {
  const name = path.split(/[\\/]/).pop()?.toLowerCase() ?? "";
  if (name === "dockerfile") return "dockerfile";
  if (name === "makefile") return "plaintext";
  const ext = name.includes(".") ? name.slice(name.lastIndexOf(".") + 1) : "";
  return languageByExtension[ext] ?? "plaintext";
}

const languageByExtension: Record<string, string> = {
  ts: "typescript",
  tsx: "typescript",
  mts: "typescript",
  cts: "typescript",
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  json: "json",
  jsonc: "json",
  ipynb: "json",
  md: "markdown",
  mdx: "markdown",
  py: "python",
  rb: "ruby",
  go: "go",
  rs: "rust",
  java: "java",
  kt: "kotlin",
  swift: "swift",
  c: "c",
  h: "c",
  cc: "cpp",
  cpp: "cpp",
  hpp: "cpp",
  cs: "csharp",
  php: "php",
  sh: "shell",
  bash: "shell",
  zsh: "shell",
  yml: "yaml",
  yaml: "yaml",
  toml: "ini",
  ini: "ini",
  html: "html",
  htm: "html",
  css: "css",
  scss: "scss",
  less: "less",
  sql: "sql",
  xml: "xml",
  svg: "xml",
  graphql: "graphql",
  prisma: "plaintext",
};
