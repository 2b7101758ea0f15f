import { describe, expect, it } from "vitest";
import { chunkRows, chunksOf, nextToDraw, rowsAddedAbove, sameRow, type ConversationRow } from "./conversation-list";

const rows = (...keys: string[]): ConversationRow[] => keys.map((key) => ({ key, render: () => null }));

describe("rowsAddedAbove", () => {
  it("counts the rows an earlier page put above the old first row", () => {
    expect(rowsAddedAbove(["10", "11"], rows("1", "2", "3", "10", "11", "12"))).toBe(3);
    expect(rowsAddedAbove(["10", "11"], rows("10", "11", "12"))).toBe(0);
  });

  it("finds the next old row when the old first one is gone (a notice replaced by the tool it answered)", () => {
    // "10:notice" disappeared once its tool call's page arrived; "11" moved from index 1 to 4
    expect(rowsAddedAbove(["10:notice", "11", "12"], rows("1", "2", "3", "9:tool", "11", "12"))).toBe(3);
  });

  it("is zero when nothing of the old rows is left (a reset) or there were none", () => {
    expect(rowsAddedAbove(["a", "b"], rows("x", "y"))).toBe(0);
    expect(rowsAddedAbove([], rows("x"))).toBe(0);
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

  it("groups rows by their place, so a chunk keeps its rows when an earlier page arrives above", () => {
    const first = 10 * chunkRows;
    const before = chunksOf(rows(...keys(2 * chunkRows + 3)), first);
    expect(before.map((c) => [c.id, c.rows.length])).toEqual([
      [10, chunkRows],
      [11, chunkRows],
      [12, 3],
    ]);
    // five rows arrive above: they fill a new chunk's end, the old chunks are as they were
    const after = chunksOf(rows(...keys(5, 100), ...keys(2 * chunkRows + 3)), first - 5);
    expect(after.map((c) => [c.id, c.rows.length])).toEqual([
      [9, 5],
      [10, chunkRows],
      [11, chunkRows],
      [12, 3],
    ]);
    expect(after[1]!.rows.map((r) => r.key)).toEqual(before[0]!.rows.map((r) => r.key));
  });

  it("is empty without rows", () => {
    expect(chunksOf([], 80)).toEqual([]);
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
