import { describe, expect, it } from "vitest";
import { applyHunks } from "@/components/approval/apply-hunks";
import { diffWireHunks } from "./wire-hunks";

const cases: Array<[string, string, string]> = [
  ["one changed line", "a\nb\nc\n", "a\nB\nc\n"],
  ["two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\nTWO\n3\n4\n5\n6\n7\nEIGHT\n9\n"],
  ["insertion at the top", "a\nb\n", "new\na\nb\n"],
  ["deletion at the end", "a\nb\nc", "a\nb"],
  ["final newline added", "a\nb", "a\nb\n"],
  ["final newline dropped", "a\nb\n", "a\nb"],
  ["new file", "", "hello\nworld\n"],
  ["emptied file", "hello\nworld\n", ""],
  ["CRLF lines", "a\r\nb\r\nc\r\n", "a\r\nX\r\nc\r\n"],
  ["blank lines moved", "a\n\nb\n\nc\n", "a\nb\n\n\nc\nd\n"],
];

describe("diffWireHunks", () => {
  it.each(cases)("%s: applying every wire hunk the browser's way gives the proposal", (_name, original, proposed) => {
    const hunks = diffWireHunks(original, proposed);
    expect(applyHunks(original, hunks, new Set(hunks.map((h) => h.id)))).toBe(proposed);
    expect(applyHunks(original, hunks, new Set())).toBe(original);
  });

  it("lets one of two hunks be rejected", () => {
    const original = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    const proposed = "1\nTWO\n3\n4\n5\n6\n7\nEIGHT\n9\n";
    const hunks = diffWireHunks(original, proposed);
    expect(hunks).toHaveLength(2);
    expect(hunks[0]!.removed).toEqual(["2"]);
    expect(hunks[0]!.added).toEqual(["TWO"]);
    expect(applyHunks(original, hunks, new Set([hunks[1]!.id]))).toBe("1\n2\n3\n4\n5\n6\n7\nEIGHT\n9\n");
  });
});
