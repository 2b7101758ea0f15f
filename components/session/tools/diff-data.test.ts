import { describe, expect, it } from "vitest";
import { buildConversation } from "../conversation";
import { fixtureLog } from "../test-support";
import {
  diffStats,
  diffTexts,
  fileToolDiff,
  patchRows,
  readStructuredPatch,
  withContext,
  wordSegments,
} from "./diff-data";

const changedWords = (segments: { text: string; changed: boolean }[] | undefined) =>
  (segments ?? []).filter((s) => s.changed).map((s) => s.text);

describe("word marks", () => {
  it("marks only the words that changed in a paired line", () => {
    const { old, new: after } = wordSegments("Status: draft now", "Status: reviewed now");
    expect(changedWords(old)).toEqual(["draft"]);
    expect(changedWords(after)).toEqual(["reviewed"]);
    // the unchanged text is kept, so each side reads back whole
    expect(old.map((s) => s.text).join("")).toBe("Status: draft now");
    expect(after.map((s) => s.text).join("")).toBe("Status: reviewed now");
  });

  it("pairs removed and added runs line by line; extra lines stay whole", () => {
    const rows = diffTexts("a = 1\nb = 2\nkeep\n", "a = 10\nb = 20\nnew line\nkeep\n");
    expect(rows.map((r) => r.type)).toEqual(["del", "del", "add", "add", "add", "context"]);
    expect(changedWords(rows[0]!.segments)).toEqual(["1"]);
    expect(changedWords(rows[2]!.segments)).toEqual(["10"]);
    expect(changedWords(rows[3]!.segments)).toEqual(["20"]);
    expect(rows[4]!.segments).toBeUndefined();
    expect(diffStats(rows)).toEqual({ added: 3, removed: 2 });
    expect(rows[5]).toMatchObject({ oldLine: 3, newLine: 4 });
  });

  it("leaves a line replaced whole without marks (nothing in common)", () => {
    const rows = diffTexts("beta\n", "BETA EDITED\n");
    expect(rows.map((r) => r.type)).toEqual(["del", "add"]);
    expect(rows[0]!.segments).toBeUndefined();
    expect(rows[1]!.segments).toBeUndefined();
  });

  it("keeps three lines of context and folds the rest into a gap", () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");
    const after = before.replace("line 10", "line ten");
    const rows = withContext(diffTexts(before, after));
    expect(rows[0]).toMatchObject({ type: "gap", text: "6 unchanged lines" });
    expect(rows.filter((r) => r.type === "context")).toHaveLength(6);
    expect(rows.at(-1)).toMatchObject({ type: "gap", text: "7 unchanged lines" });
  });
});

describe("structured patches", () => {
  it("reads the CLI's hunks and numbers the lines", () => {
    const hunks = readStructuredPatch([
      { oldStart: 3, oldLines: 2, newStart: 3, newLines: 2, lines: [" ctx", "-x = 1", "+x = 42"] },
    ]);
    const rows = patchRows(hunks!);
    expect(rows).toMatchObject([
      { type: "context", text: "ctx", oldLine: 3, newLine: 3 },
      { type: "del", text: "x = 1", oldLine: 4 },
      { type: "add", text: "x = 42", newLine: 4 },
    ]);
    expect(changedWords(rows[1]!.segments)).toEqual(["1"]);
    expect(changedWords(rows[2]!.segments)).toEqual(["42"]);
  });

  it("refuses what is not a patch", () => {
    expect(readStructuredPatch("nope")).toBeUndefined();
    expect(readStructuredPatch([{ oldStart: "1", lines: [] }])).toBeUndefined();
  });
});

describe("fileToolDiff on the real CLI's tool results (file-tools transcript)", () => {
  const conversation = buildConversation(fixtureLog("file-tools"));
  const tools = conversation.items.flatMap((i) => (i.kind === "tool" ? [i] : []));
  const diffOf = (name: string, n = 0) => {
    const tool = tools.filter((t) => t.name === name)[n]!;
    return fileToolDiff(tool.name, tool.input, tool.result?.structured);
  };

  it("an Edit uses the structuredPatch, word-marked", () => {
    const edits = tools.filter((t) => t.name === "Edit" && !t.result?.isError);
    const replaceAll = edits.find((t) => (t.input as { replace_all?: boolean }).replace_all === true)!;
    const diff = fileToolDiff("Edit", replaceAll.input, replaceAll.result?.structured)!;
    expect(diff.source).toBe("patch");
    expect(diff.rows.map((r) => r.type)).toEqual(["del", "del", "add", "add", "context"]);
    expect(changedWords(diff.rows[0]!.segments)).toEqual(["1"]);
    expect(changedWords(diff.rows[2]!.segments)).toEqual(["42"]);
  });

  it("a Write over an existing file diffs against the original; a new file is all added", () => {
    const writes = tools.filter((t) => t.name === "Write");
    const diffs = writes.map((t) => fileToolDiff("Write", t.input, t.result?.structured)!);
    const created = diffs.find((d) => d.created)!;
    expect(created.rows).toEqual([{ type: "add", text: "brand new content", newLine: 1 }]);
    const updated = diffs.find((d) => !d.created)!;
    expect(updated.source).toBe("file");
    expect(updated.rows.map((r) => r.type)).toEqual(["del", "add", "context", "context"]);
    expect(changedWords(updated.rows[1]!.segments)).toEqual(["rewritten "]);
  });

  it("a NotebookEdit diffs the cell's old and new source", () => {
    const diff = diffOf("NotebookEdit")!;
    expect(diff.path.endsWith("nb.ipynb")).toBe(true);
    expect(diff.rows.map((r) => [r.type, r.text])).toEqual([
      ["del", "print('hello')"],
      ["add", 'print("edited by model")'],
    ]);
  });

  it("without a result, an Edit diffs its input; MultiEdit shows each edit", () => {
    const edit = fileToolDiff(
      "Edit",
      { file_path: "/w/a.ts", old_string: "let a = 1;", new_string: "let a = 2;" },
      undefined,
    )!;
    expect(edit.source).toBe("input");
    expect(changedWords(edit.rows[1]!.segments)).toEqual(["2"]);
    const multi = fileToolDiff(
      "MultiEdit",
      {
        file_path: "/w/a.ts",
        edits: [
          { old_string: "one two", new_string: "one three" },
          { old_string: "x", new_string: "y" },
        ],
      },
      undefined,
    )!;
    expect(multi.rows.map((r) => r.type)).toEqual(["del", "add", "gap", "del", "add"]);
    expect(fileToolDiff("Bash", { command: "ls" }, undefined)).toBeUndefined();
  });
});
