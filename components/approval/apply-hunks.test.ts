import { describe, expect, it } from "vitest";
import { applyHunks, HunkMismatchError, languageForPath, toggleHunk } from "./apply-hunks";

const original = ["# Title", "", "one", "two", "three", "", "Status: draft", ""].join("\n");
// Proposal: "two" → "TWO", a line inserted after "three", "Status: draft" removed.
const proposed = ["# Title", "", "one", "TWO", "three", "inserted", "", ""].join("\n");
const hunks = [
  { id: "h1", oldStart: 4, oldLines: 1, newStart: 4, newLines: 1, removed: ["two"], added: ["TWO"] },
  // Unified-diff style: an empty old range starts at the line it follows.
  { id: "h2", oldStart: 5, oldLines: 0, newStart: 6, newLines: 1, removed: [], added: ["inserted"] },
  { id: "h3", oldStart: 7, oldLines: 1, newStart: 8, newLines: 0, removed: ["Status: draft"], added: [] },
];
const all = new Set(["h1", "h2", "h3"]);

describe("applyHunks", () => {
  it("gives the proposal with every hunk and the original with none", () => {
    expect(applyHunks(original, hunks, all)).toBe(proposed);
    expect(applyHunks(original, hunks, new Set())).toBe(original);
  });

  it("applies only the accepted hunks", () => {
    expect(applyHunks(original, hunks, new Set(["h2"]))).toBe(
      ["# Title", "", "one", "two", "three", "inserted", "", "Status: draft", ""].join("\n"),
    );
    expect(applyHunks(original, hunks, new Set(["h1", "h3"]))).toBe(
      ["# Title", "", "one", "TWO", "three", "", ""].join("\n"),
    );
  });

  it("does not depend on the hunks' order or on the empty-range convention", () => {
    const otherConvention = hunks.map((h) => (h.id === "h2" ? { ...h, oldStart: 6 } : h));
    expect(applyHunks(original, [...otherConvention].reverse(), all)).toBe(proposed);
  });

  it("finds a hunk whose start is off by a line", () => {
    const off = [{ ...hunks[0]!, oldStart: 5 }];
    expect(applyHunks(original, off, new Set(["h1"]))).toBe(original.replace("two", "TWO"));
  });

  it("creates a new file from an empty original", () => {
    const h = [{ id: "n", oldStart: 0, oldLines: 0, newStart: 1, newLines: 2, removed: [], added: ["a", "b"] }];
    // An empty file is one empty line; the added lines go before it, keeping the trailing newline.
    expect(applyHunks("", h, new Set(["n"]))).toBe("a\nb\n");
    expect(applyHunks("", h, new Set())).toBe("");
  });

  it("refuses a hunk that is not in the original", () => {
    const bad = [{ id: "x", oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, removed: ["nope"], added: ["yes"] }];
    expect(() => applyHunks(original, bad, new Set(["x"]))).toThrow(HunkMismatchError);
  });

  it("handles repeated lines by position", () => {
    const text = "x\ny\nx\ny\n";
    const h = [{ id: "second", oldStart: 3, oldLines: 1, newStart: 3, newLines: 1, removed: ["x"], added: ["z"] }];
    expect(applyHunks(text, h, new Set(["second"]))).toBe("x\ny\nz\ny\n");
  });
});

describe("toggleHunk", () => {
  it("rejects one hunk and keeps a hand edit elsewhere", () => {
    const edited = proposed.replace("# Title", "# My title");
    const out = toggleHunk(edited, original, hunks, all, "h1", false);
    expect(out).toBe(edited.replace("TWO", "two"));
  });

  it("re-accepts a rejected insertion after the line it follows", () => {
    const without = applyHunks(original, hunks, new Set(["h1", "h3"]));
    expect(toggleHunk(without, original, hunks, new Set(["h1", "h3"]), "h2", true)).toBe(proposed);
  });

  it("undoes and redoes a deletion", () => {
    const restored = toggleHunk(proposed, original, hunks, all, "h3", false);
    expect(restored).toBe(applyHunks(original, hunks, new Set(["h1", "h2"])));
    expect(toggleHunk(restored!, original, hunks, new Set(["h1", "h2"]), "h3", true)).toBe(proposed);
  });

  it("gives up when the hunk's lines were edited by hand", () => {
    const edited = proposed.replace("TWO", "Two!");
    expect(toggleHunk(edited, original, hunks, all, "h1", false)).toBeUndefined();
  });

  it("is a no-op when the hunk is already in the asked state", () => {
    expect(toggleHunk(proposed, original, hunks, all, "h1", true)).toBe(proposed);
  });
});

describe("languageForPath", () => {
  it("maps extensions to Monaco languages", () => {
    expect(languageForPath("/w/src/app.tsx")).toBe("typescript");
    expect(languageForPath("conduit-demo.md")).toBe("markdown");
    expect(languageForPath("nb.ipynb")).toBe("json");
    expect(languageForPath("Dockerfile")).toBe("dockerfile");
    expect(languageForPath("LICENSE")).toBe("plaintext");
  });
});
