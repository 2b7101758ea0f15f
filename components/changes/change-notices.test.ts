import { describe, expect, it } from "vitest";
import { describeChangeEvent } from "./change-notices";

describe("describeChangeEvent", () => {
  it("says what a turn changed, and nothing when it changed nothing", () => {
    const files = [
      { path: "a.ts", status: "modified", insertions: 2, deletions: 1 },
      { path: "b.ts", status: "added", insertions: 3, deletions: 0 },
    ];
    expect(describeChangeEvent("changes", { status: "ok", files }, "Ann")).toMatchObject({ tone: "info", text: "This turn changed 2 files (+5 −1). See the Changes tab." });
    expect(describeChangeEvent("changes", { status: "ok", files: [] }, "Ann")).toBeUndefined();
    expect(describeChangeEvent("changes", { status: "unknown", files: [] }, "Ann")?.tone).toBe("warning");
  });
  it("names who reverted or rewound, and what was left alone", () => {
    expect(describeChangeEvent("revert", { what: "hunk", path: "a.ts", files: [] }, "Ann")?.text).toBe("Ann reverted a hunk of a.ts.");
    expect(
      describeChangeEvent("rewind", { promptSeq: 4, files: [{ path: "a.ts", status: "modified", insertions: 1, deletions: 2 }], skipped: ["b.ts"] }, "Ann")?.text,
    ).toBe("Ann rewound the workspace's files to before a prompt: 1 file (+1 −2). Left alone (changed since): b.ts.");
    // named by its words, not by the log's event number
    const texts = new Map([[4, "add a   health check\nto the server"]]);
    expect(describeChangeEvent("rewind", { promptSeq: 4, files: [] }, "Ann", (seq) => texts.get(seq))?.text).toBe(
      "Ann rewound the workspace's files to before the prompt “add a health check to the server”: 0 files (+0 −0).",
    );
    expect(describeChangeEvent("rewind", undefined, "Ann")?.text).toContain("0 files");
  });
});
