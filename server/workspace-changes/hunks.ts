/**
 * The line hunks of a file's change, from its two sides (pure: the web app lists them, the door
 * reverses one). The browser's hunk list and a revert agree on them through this one function.
 */
import { structuredPatch, type StructuredPatch } from "diff";
import type { ChangeHunk, FileSide } from "@/server/shared/wire/changes";

/** Lines of context around each hunk (what the browser's hunk list and a revert agree on). */
const hunkContext = 3;

/** The line hunks between two sides (none when either is not text). */
export function hunksOf(before: FileSide, after: FileSide): { patch: StructuredPatch | undefined; hunks: ChangeHunk[] } {
  const a = before.kind === "text" ? before.content : before.kind === "absent" ? "" : undefined;
  const b = after.kind === "text" ? after.content : after.kind === "absent" ? "" : undefined;
  if (a === undefined || b === undefined) return { patch: undefined, hunks: [] };
  const patch = structuredPatch("a", "b", a, b, "", "", { context: hunkContext });
  return {
    patch,
    hunks: patch.hunks.map((h, index) => ({
      index,
      oldStart: h.oldStart,
      oldLines: h.oldLines,
      newStart: h.newStart,
      newLines: h.newLines,
    })),
  };
}
