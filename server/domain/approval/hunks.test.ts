import { describe, expect, it } from "vitest";
import { AppError } from "@/server/shared/errors/app-error";
import { applyHunkSelection, diffHunks, MAX_EDIT_DISTANCE, splitLines } from "./hunks";
import { createRandom, randomEdit, randomText } from "./test-random";

describe("splitLines", () => {
  it("keeps terminators so joining gives the text back", () => {
    expect(splitLines("a\r\nb\nc")).toEqual(["a\r\n", "b\n", "c"]);
    expect(splitLines("a\n")).toEqual(["a\n"]);
    expect(splitLines("")).toEqual([]);
    expect(splitLines("\n\n")).toEqual(["\n", "\n"]);
  });
});

describe("diffHunks", () => {
  it("finds nothing between equal texts", () => {
    expect(diffHunks("a\nb\n", "a\nb\n")).toEqual([]);
  });

  it("splits separate changes into separate hunks with line numbers", () => {
    const original = "one\ntwo\nthree\nfour\nfive\n";
    const proposed = "one\nTWO\nthree\nfour\nFIVE\nsix\n";
    const hunks = diffHunks(original, proposed);
    expect(hunks).toHaveLength(2);
    expect(hunks[0]).toMatchObject({
      oldStart: 2,
      oldLines: 1,
      newStart: 2,
      newLines: 1,
      removed: ["two\n"],
      added: ["TWO\n"],
    });
    expect(hunks[1]).toMatchObject({
      oldStart: 5,
      oldLines: 1,
      newStart: 5,
      newLines: 2,
      removed: ["five\n"],
      added: ["FIVE\n", "six\n"],
    });
    expect(new Set(hunks.map((h) => h.id)).size).toBe(2);
  });

  it("reports pure insertions and deletions", () => {
    expect(diffHunks("a\nc\n", "a\nb\nc\n")).toEqual([
      { id: "h2-2", oldStart: 2, oldLines: 0, newStart: 2, newLines: 1, removed: [], added: ["b\n"] },
    ]);
    expect(diffHunks("a\nb\nc\n", "a\nc\n")).toEqual([
      { id: "h2-2", oldStart: 2, oldLines: 1, newStart: 2, newLines: 0, removed: ["b\n"], added: [] },
    ]);
  });

  it("treats a dropped final newline and a changed line ending as changes", () => {
    expect(diffHunks("a\nb\n", "a\nb")).toMatchObject([{ removed: ["b\n"], added: ["b"] }]);
    expect(diffHunks("a\r\nb\r\n", "a\nb\r\n")).toMatchObject([{ removed: ["a\r\n"], added: ["a\n"] }]);
  });

  it("handles empty sides", () => {
    expect(diffHunks("", "x\ny")).toMatchObject([{ oldStart: 1, oldLines: 0, added: ["x\n", "y"] }]);
    expect(diffHunks("x\n", "")).toMatchObject([{ oldLines: 1, newLines: 0, removed: ["x\n"] }]);
  });

  it("finds a minimal diff among repeated lines", () => {
    const hunks = diffHunks("a\nb\na\nb\na\n", "a\nb\na\nX\nb\na\n");
    expect(hunks).toHaveLength(1);
    expect(hunks[0]).toMatchObject({ oldLines: 0, newLines: 1, added: ["X\n"] });
  });

  it("falls back to one exact hunk beyond the edit-distance cap", () => {
    const n = MAX_EDIT_DISTANCE + 10;
    const original = Array.from({ length: n }, (_, i) => `a${i}\n`).join("");
    const proposed = Array.from({ length: n }, (_, i) => `b${i}\n`).join("");
    const hunks = diffHunks(`head\n${original}tail\n`, `head\n${proposed}tail\n`);
    expect(hunks).toHaveLength(1);
    expect(hunks[0]).toMatchObject({ oldStart: 2, oldLines: n, newLines: n });
    expect(applyHunkSelection(`head\n${original}tail\n`, `head\n${proposed}tail\n`, [hunks[0]!.id])).toBe(
      `head\n${proposed}tail\n`,
    );
  });
});

describe("applyHunkSelection", () => {
  const original = "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n";
  const proposed = "line 1\nLINE 2 changed\nline 3\nline 4\nline 5\nLINE 6 changed\n";

  it("two hunks, one rejected: only the accepted one is applied", () => {
    const [first, second] = diffHunks(original, proposed);
    expect(applyHunkSelection(original, proposed, [first!.id])).toBe(
      "line 1\nLINE 2 changed\nline 3\nline 4\nline 5\nline 6\n",
    );
    expect(applyHunkSelection(original, proposed, [second!.id])).toBe(
      "line 1\nline 2\nline 3\nline 4\nline 5\nLINE 6 changed\n",
    );
  });

  it("all accepted gives the proposal, none gives the original", () => {
    const ids = diffHunks(original, proposed).map((h) => h.id);
    expect(applyHunkSelection(original, proposed, ids)).toBe(proposed);
    expect(applyHunkSelection(original, proposed, [])).toBe(original);
  });

  it("refuses an id that is not a hunk of this pair", () => {
    expect(() => applyHunkSelection(original, proposed, ["h99-99"])).toThrow(AppError);
    try {
      applyHunkSelection(original, proposed, ["nope"]);
    } catch (err) {
      expect((err as AppError).code).toBe("invalid_payload");
    }
  });

  it("property: every selection reassembles exactly (random texts, CRLF, unicode, final newlines)", () => {
    for (let seed = 1; seed <= 400; seed++) {
      const r = createRandom(seed);
      const crlf = r.bool(0.3);
      const a = randomText(r, { crlf: r.bool(0.5) ? crlf : undefined });
      const b = r.bool(0.7) ? randomEdit(r, a) : randomText(r);
      const hunks = diffHunks(a, b);
      const ctx = `seed ${seed}`;
      expect(
        applyHunkSelection(
          a,
          b,
          hunks.map((h) => h.id),
        ),
        ctx,
      ).toBe(b);
      expect(applyHunkSelection(a, b, []), ctx).toBe(a);
      // Hunks are ordered, disjoint, and each one alone changes exactly its own lines.
      let lastEnd = 0;
      for (const h of hunks) {
        expect(h.oldStart - 1 >= lastEnd, ctx).toBe(true);
        expect(h.removed.length + h.added.length > 0, ctx).toBe(true);
        lastEnd = h.oldStart - 1 + h.oldLines;
      }
      const chosen = hunks.filter(() => r.bool()).map((h) => h.id);
      const partial = applyHunkSelection(a, b, chosen);
      // Rejected hunks of a partial result are exactly the hunks left between it and b.
      expect(diffHunks(partial, b).length <= hunks.length - chosen.length, ctx).toBe(true);
    }
  });

  it("property: the diff is minimal in changed lines for small cases (checked against LCS)", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const r = createRandom(1000 + seed);
      const a = randomText(r, { maxLines: 8 });
      const b = randomEdit(r, a);
      const changed = diffHunks(a, b).reduce((n, h) => n + h.oldLines + h.newLines, 0);
      const la = splitLines(a);
      const lb = splitLines(b);
      expect(changed, `seed ${seed}`).toBe(la.length + lb.length - 2 * lcsLength(la, lb));
    }
  });
});

function lcsLength(a: readonly string[], b: readonly string[]): number {
  const row = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    let diag = 0;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]!;
      row[j] = a[i - 1] === b[j - 1] ? diag + 1 : Math.max(row[j]!, row[j - 1]!);
      diag = up;
    }
  }
  return row[b.length]!;
}
