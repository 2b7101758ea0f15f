import type { WireHunk } from "@/server/shared/wire/approval";
import { diffHunks } from "./hunks";

/**
 * The hunks the browser gets. The browser counts lines as the pieces of `text.split("\n")`
 * (no terminators; a trailing newline is a last empty line), while {@link diffHunks} keeps
 * terminators. Giving every piece a `"\n"` and diffing that makes both line models agree
 * exactly: line N here is piece N there, and stripping the added `"\n"` gives the pieces back.
 */
export function diffWireHunks(original: string, proposed: string): WireHunk[] {
  const encode = (text: string) =>
    text
      .split("\n")
      .map((piece) => `${piece}\n`)
      .join("");
  const strip = (line: string) => line.slice(0, -1);
  return diffHunks(encode(original), encode(proposed)).map((h) => ({
    id: h.id,
    oldStart: h.oldStart,
    oldLines: h.oldLines,
    newStart: h.newStart,
    newLines: h.newLines,
    removed: h.removed.map(strip),
    added: h.added.map(strip),
  }));
}
