import { describe, expect, it } from "vitest";
import { chunkRows, chunksOf, nextToDraw, placesOf, sameRow, type ConversationRow } from "./conversation-list";

const rows = (...keys: string[]): ConversationRow[] => keys.map((key) => ({ key, render: () => null }));

describe("placesOf", () => {
  const known = (...pairs: [string, number][]) => new Map(pairs);

  it("counts from the start when no row is known, and keeps known places", () => {
    expect(placesOf(rows("a", "b", "c"), known(), 100)).toEqual([100, 101, 102]);
    expect(placesOf(rows("a", "b"), known(["a", 100], ["b", 101]))).toEqual([100, 101]);
  });

  it("counts rows read above down from the first known row, and rows added below up", () => {
    expect(placesOf(rows("x", "y", "a", "b", "c"), known(["a", 100], ["b", 101]))).toEqual([98, 99, 100, 101, 102]);
  });

  it("leaves a gap where a row went (a notice replaced by the tool it answered), so the rows after it keep their places", () => {
    // "10:notice" was at 101; its page arrived with the tool call "9:tool" above
    const before = known(["11", 100], ["10:notice", 101], ["12", 102], ["13", 103]);
    expect(placesOf(rows("8", "9:tool", "11", "12", "13"), before)).toEqual([98, 99, 100, 102, 103]);
  });

  it("never goes down along the rows: a new row between two known neighbours shares the earlier one's place", () => {
    expect(placesOf(rows("a", "new", "b"), known(["a", 100], ["b", 101]))).toEqual([100, 101, 101]);
    expect(placesOf(rows("a", "new", "b"), known(["a", 100], ["b", 105]))).toEqual([100, 101, 105]);
  });

  it("places every row again, from the first one's place, when the known rows are out of order", () => {
    expect(placesOf(rows("b", "a", "c"), known(["a", 100], ["b", 101]))).toEqual([101, 102, 103]);
  });
});

describe("sameRow", () => {
  const item = { text: "hello" };
  const onRewind = () => {};
  const row = (deps?: unknown[], key = "1"): ConversationRow => ({ key, render: () => null, deps });

  it("is the same row when key and every dep are the same values", () => {
    expect(sameRow(row([item, onRewind]), row([item, onRewind]))).toBe(true);
    const one = row();
    expect(sameRow(one, one)).toBe(true);
  });

  it("draws again when a dep, the key or the number of deps changed, or deps are missing", () => {
    expect(sameRow(row([item, onRewind]), row([{ text: "hello" }, onRewind]))).toBe(false);
    expect(sameRow(row([item, onRewind]), row([item, () => {}]))).toBe(false);
    expect(sameRow(row([item]), row([item], "2"))).toBe(false);
    expect(sameRow(row([item]), row([item, undefined]))).toBe(false);
    expect(sameRow(row(), row())).toBe(false);
  });
});

describe("chunksOf", () => {
  const keys = (n: number, from = 0) => Array.from({ length: n }, (_, i) => String(from + i));

  it("groups rows by their places, so a chunk keeps its rows when an earlier page arrives above", () => {
    const first = 10 * chunkRows;
    const old = rows(...keys(2 * chunkRows + 3));
    const oldPlaces = placesOf(old, new Map(), first);
    const before = chunksOf(old, oldPlaces);
    expect(before.map((c) => [c.id, c.rows.length])).toEqual([
      [10, chunkRows],
      [11, chunkRows],
      [12, 3],
    ]);
    // five rows arrive above: they fill a new chunk's end, the old chunks are as they were
    const now = rows(...keys(5, 100), ...keys(2 * chunkRows + 3));
    const after = chunksOf(now, placesOf(now, new Map(old.map((r, i) => [r.key, oldPlaces[i]!]))));
    expect(after.map((c) => [c.id, c.rows.length])).toEqual([
      [9, 5],
      [10, chunkRows],
      [11, chunkRows],
      [12, 3],
    ]);
    expect(after[1]!.rows.map((r) => r.key)).toEqual(before[0]!.rows.map((r) => r.key));
  });

  it("is empty without rows", () => {
    expect(chunksOf([], [])).toEqual([]);
  });
});

describe("nextToDraw", () => {
  const near = new Map([
    [4, 900],
    [5, 0],
    [6, 300],
    [7, 0],
  ]);
  const rowsOf = () => 8;

  it("picks the blocks nearest the screen that are not drawn, within the row budget", () => {
    expect(nextToDraw(near, (id) => id === 5, rowsOf, 16)).toEqual([7, 6]);
    expect(nextToDraw(near, (id) => id === 5, rowsOf, 24)).toEqual([7, 6, 4]);
  });

  it("always picks one block even over the budget, and none when all are drawn", () => {
    expect(nextToDraw(near, () => false, () => 40, 24)).toHaveLength(1);
    expect(nextToDraw(near, () => true, rowsOf, 24)).toEqual([]);
  });
});
