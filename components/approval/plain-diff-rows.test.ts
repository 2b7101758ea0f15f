import { describe, expect, it } from "vitest";
import type { WireHunk } from "@/server/shared/wire/approval";
import { plainDiffRows } from "./plain-diff-rows";

const hunk = (over: Partial<WireHunk>): WireHunk => ({
  id: "h",
  oldStart: 3,
  oldLines: 1,
  newStart: 3,
  newLines: 2,
  removed: ["Status: draft"],
  added: ["Status: reviewed", ""],
  ...over,
});

describe("plainDiffRows", () => {
  it("draws each hunk as a header, its removed lines, then its added ones, numbered", () => {
    expect(plainDiffRows([hunk({})], "")).toEqual([
      { kind: "header", text: "@@ −3 +3,2 @@", hunk: "h" },
      { kind: "removed", text: "Status: draft", line: 3, hunk: "h" },
      { kind: "added", text: "Status: reviewed", line: 3, hunk: "h" },
      { kind: "added", text: "", line: 4, hunk: "h" },
    ]);
  });

  it("draws a new file's lines as added", () => {
    const rows = plainDiffRows([hunk({ oldStart: 0, oldLines: 0, newStart: 1, newLines: 2, removed: [], added: ["# Hi", "there"] })], "");
    expect(rows.map((r) => r.kind)).toEqual(["header", "added", "added"]);
    expect(rows[0]!.text).toBe("@@ −0,0 +1,2 @@");
  });

  it("shows the text itself when there are no hunks", () => {
    expect(plainDiffRows([], "a\nb\n")).toEqual([
      { kind: "text", text: "a", line: 1 },
      { kind: "text", text: "b", line: 2 },
    ]);
    expect(plainDiffRows([], "")).toEqual([]);
  });

  it("stops at the limit and counts the rest", () => {
    const big = hunk({ oldLines: 0, removed: [], newLines: 10, added: Array.from({ length: 10 }, (_, i) => `l${i}`) });
    const rows = plainDiffRows([big], "", 4);
    expect(rows).toHaveLength(5);
    expect(rows.at(-1)).toEqual({ kind: "more", text: "… 7 more lines; the editor shows them all." });
  });
});
