import { AppError, ErrorCode } from "@/server/shared/errors/app-error";

/**
 * Line hunks between a file's text and a proposed text, and partial acceptance of them.
 *
 * Lines keep their terminators (`"a\r\n"`, `"b\n"`, a last `"c"` without one), so joining the
 * lines gives back the exact text: a changed line ending or a dropped final newline is a
 * change like any other, and applying a selection never normalises anything.
 *
 * The diff is Myers' O(ND) algorithm ("An O(ND) Difference Algorithm and Its Variations",
 * 1986) on interned lines, after trimming the common head and tail. When the edit distance
 * exceeds {@link MAX_EDIT_DISTANCE} the middle becomes one hunk instead: still exact, just
 * coarser, and bounded in time and memory whatever the approver pastes.
 */

/** One maximal run of changed lines. */
export interface Hunk {
  /** Stable for a given (original, proposed) pair: `h<oldStart>-<newStart>`. */
  id: string;
  /** 1-based first line in the original (for an insertion: the line it goes before). */
  oldStart: number;
  oldLines: number;
  /** 1-based first line in the proposed text. */
  newStart: number;
  newLines: number;
  /** Original lines this hunk replaces, terminators included. */
  removed: readonly string[];
  /** Proposed lines it puts in their place, terminators included. */
  added: readonly string[];
}

/** Above this many inserted plus deleted lines, the changed middle becomes a single hunk. */
export const MAX_EDIT_DISTANCE = 2000;

/** Splits text into lines that keep their terminator (`\n`, or `\r\n` as part of it). */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    if (nl === -1) break;
    lines.push(text.slice(start, nl + 1));
    start = nl + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/** The hunks that turn `original` into `proposed`, in file order. Empty when equal. */
export function diffHunks(original: string, proposed: string): Hunk[] {
  const a = splitLines(original);
  const b = splitLines(proposed);
  const hunks: Hunk[] = [];
  let i = 0;
  let j = 0;
  for (const op of diffLines(a, b)) {
    if (op.kind === "equal") {
      i += op.count;
      j += op.count;
      continue;
    }
    const removed = a.slice(i, i + op.deleted);
    const added = b.slice(j, j + op.inserted);
    hunks.push({
      id: `h${i + 1}-${j + 1}`,
      oldStart: i + 1,
      oldLines: removed.length,
      newStart: j + 1,
      newLines: added.length,
      removed,
      added,
    });
    i += op.deleted;
    j += op.inserted;
  }
  return hunks;
}

/**
 * The original text with only the accepted hunks of `diffHunks(original, proposed)` applied.
 * All accepted gives `proposed`, none gives `original`. An id that is not a hunk of this pair
 * is refused, so a selection made against another diff can never be applied silently.
 */
export function applyHunkSelection(original: string, proposed: string, acceptedHunkIds: Iterable<string>): string {
  const hunks = diffHunks(original, proposed);
  const accepted = new Set(acceptedHunkIds);
  const known = new Set(hunks.map((h) => h.id));
  const unknown = [...accepted].filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new AppError(
      ErrorCode.invalidPayload,
      `Unknown hunk ${unknown.join(", ")}: the file or the proposal changed since the diff was shown.`,
      { unknown },
    );
  }
  const a = splitLines(original);
  const out: string[] = [];
  let i = 0;
  for (const hunk of hunks) {
    out.push(...a.slice(i, hunk.oldStart - 1));
    out.push(...(accepted.has(hunk.id) ? hunk.added : hunk.removed));
    i = hunk.oldStart - 1 + hunk.oldLines;
  }
  out.push(...a.slice(i));
  return out.join("");
}

// ---------------------------------------------------------------------------------------------
// Myers diff on lines

type Op = { kind: "equal"; count: number } | { kind: "change"; deleted: number; inserted: number };

/** Runs of equal lines and of changes; adjacent deletions and insertions merge into one change. */
function diffLines(a: readonly string[], b: readonly string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;

  const ids = new Map<string, number>();
  const intern = (line: string) => {
    let id = ids.get(line);
    if (id === undefined) {
      id = ids.size;
      ids.set(line, id);
    }
    return id;
  };
  const x = a.slice(head, a.length - tail).map(intern);
  const y = b.slice(head, b.length - tail).map(intern);

  const raw: Array<"=" | "-" | "+"> = [];
  const middle = myers(x, y);
  if (middle === null) {
    for (let k = 0; k < x.length; k++) raw.push("-");
    for (let k = 0; k < y.length; k++) raw.push("+");
  } else {
    raw.push(...middle);
  }

  const ops: Op[] = [];
  const push = (kind: "=" | "-" | "+", n: number) => {
    if (n === 0) return;
    const last = ops[ops.length - 1];
    if (kind === "=") {
      if (last?.kind === "equal") last.count += n;
      else ops.push({ kind: "equal", count: n });
      return;
    }
    const deleted = kind === "-" ? n : 0;
    const inserted = kind === "+" ? n : 0;
    if (last?.kind === "change") {
      last.deleted += deleted;
      last.inserted += inserted;
    } else {
      ops.push({ kind: "change", deleted, inserted });
    }
  };
  push("=", head);
  for (const step of raw) push(step, 1);
  push("=", tail);
  return ops;
}

/**
 * The shortest edit script from `x` to `y` (greedy forward Myers; before each step d the
 * diagonals -d-1..d+1 of V are kept for the backtrack, O(D²) memory), or null when it needs
 * more than {@link MAX_EDIT_DISTANCE} steps.
 */
function myers(x: readonly number[], y: readonly number[]): Array<"=" | "-" | "+"> | null {
  const n = x.length;
  const m = y.length;
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let px: number;
      if (k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)) px = v[offset + k + 1]!;
      else px = v[offset + k - 1]! + 1;
      let py = px - k;
      while (px < n && py < m && x[px] === y[py]) {
        px++;
        py++;
      }
      v[offset + k] = px;
      if (px >= n && py >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) return null;

  const script: Array<"=" | "-" | "+"> = [];
  let px = n;
  let py = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d]!;
    const at = (diagonal: number) => prev[diagonal + d + 1]!;
    const k = px - py;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (px > prevX + (down ? 0 : 1) && py > prevY + (down ? 1 : 0)) {
      script.push("=");
      px--;
      py--;
    }
    script.push(down ? "+" : "-");
    px = prevX;
    py = prevY;
  }
  while (px > 0 && py > 0) {
    script.push("=");
    px--;
    py--;
  }
  return script.reverse();
}
