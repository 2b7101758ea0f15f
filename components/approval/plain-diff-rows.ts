/**
 * The rows of the plain diff an approval card draws before Monaco's editor is ready: per hunk a
 * header, the removed lines (numbered in the file now) and the added ones (numbered in the
 * proposal). Bounded, so a huge Write does not stall the card's first paint.
 */
import type { WireHunk } from "@/server/shared/wire/approval";

export interface PlainDiffRow {
  kind: "header" | "removed" | "added" | "text" | "more";
  text: string;
  /** The line's number (removed: in the file now; added and text: in the proposal). */
  line?: number;
  /** The hunk the row belongs to. */
  hunk?: string;
}

/** Rows drawn at most; the rest is counted in one "more" row. */
export const maxPlainDiffRows = 400;

function range(start: number, count: number): string {
  return count === 1 ? `${start}` : `${start},${count}`;
}

/** The rows for `hunks`, or `fallbackText` as plain numbered lines when there are none. */
export function plainDiffRows(hunks: readonly WireHunk[], fallbackText: string, limit = maxPlainDiffRows): PlainDiffRow[] {
  const rows: PlainDiffRow[] = [];
  let left = 0;
  const push = (row: PlainDiffRow) => {
    if (rows.length < limit) rows.push(row);
    else left += 1;
  };
  if (hunks.length === 0) {
    const lines = fallbackText === "" ? [] : fallbackText.replace(/\n$/, "").split("\n");
    lines.forEach((text, i) => push({ kind: "text", text, line: i + 1 }));
  } else {
    for (const hunk of hunks) {
      const id = hunk.id;
      push({ kind: "header", text: `@@ −${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`, hunk: id });
      hunk.removed.forEach((text, i) => push({ kind: "removed", text, line: hunk.oldStart + i, hunk: id }));
      hunk.added.forEach((text, i) => push({ kind: "added", text, line: hunk.newStart + i, hunk: id }));
    }
  }
  if (left > 0) rows.push({ kind: "more", text: `… ${left} more line${left === 1 ? "" : "s"}; the editor shows them all.` });
  return rows;
}
