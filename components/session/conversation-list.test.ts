import { describe, expect, it } from "vitest";
import { rowsAddedAbove, sameRow, type ConversationRow } from "./conversation-list";

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
