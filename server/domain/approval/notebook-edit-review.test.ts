import { describe, expect, it } from "vitest";
import { ZPermissionDecision } from "@/server/shared/claude-protocol/encode";
import { allowRequest } from "./answers";
import { buildReviewedInput, isReviewableFileTool, proposeFileChange, reviewedFilePath } from "./file-edit-review";
import { applyHunkSelection, diffHunks } from "./hunks";
import {
  cellSource,
  findNotebookCell,
  parseNotebook,
  targetNotebookCell,
  ZNotebookEditInput,
  type NotebookCell,
  type NotebookEditInput,
} from "./notebook-edit-review";
import { createRandom, randomEdit, randomText } from "./test-random";

const NB = "/ws/nb.ipynb";

/** A notebook file as Jupyter writes it (indent 1, trailing newline). */
function notebookFile(cells: readonly Record<string, unknown>[], extra: Record<string, unknown> = {}): string {
  const nb = { cells, metadata: { language_info: { name: "python" } }, nbformat: 4, nbformat_minor: 5, ...extra };
  return `${JSON.stringify(nb, null, 1)}\n`;
}

const withIds = notebookFile([
  {
    cell_type: "code",
    execution_count: 3,
    id: "cell-a",
    metadata: {},
    outputs: [],
    source: ["print('hello')\n", "x = 1"],
  },
  { cell_type: "markdown", id: "cell-b", metadata: {}, source: "# Title\n" },
]);

// nbformat 4.4: no ids; the CLI names the cells cell-0, cell-1, ….
const withoutIds = notebookFile(
  [
    { cell_type: "code", execution_count: null, metadata: {}, outputs: [], source: ["a = 1\n"] },
    { cell_type: "code", execution_count: null, metadata: {}, outputs: [], source: ["b = 2\n"] },
  ],
  { nbformat_minor: 4, metadata: {} },
);

function nbEdit(fields: Partial<NotebookEditInput>): NotebookEditInput {
  return { notebook_path: NB, new_source: "", ...fields };
}

/** What the CLI does to the file with a replace/insert/delete (its call(), cell level). */
function applyCliNotebookEdit(raw: string, input: NotebookEditInput): NotebookCell[] {
  const nb = JSON.parse(raw) as { cells: NotebookCell[] };
  const mode = input.edit_mode ?? "replace";
  const found = findNotebookCell(nb.cells, input.cell_id, mode);
  if (!found.ok) throw new Error(found.problem);
  if (mode === "delete") nb.cells.splice(found.index, 1);
  else if (mode === "insert") nb.cells.splice(found.index, 0, { cell_type: input.cell_type, source: input.new_source });
  else nb.cells[found.index]!.source = input.new_source;
  return nb.cells;
}

describe("parseNotebook", () => {
  it("reads the cells and the notebook's language (python when unnamed)", () => {
    const parsed = parseNotebook(withIds);
    expect(parsed).toMatchObject({ ok: true, language: "python" });
    expect(parseNotebook(withoutIds)).toMatchObject({ ok: true, language: "python" });
    expect(parseNotebook(notebookFile([], { metadata: { language_info: { name: "R" } } }))).toMatchObject({
      language: "R",
    });
  });

  it("tolerates a byte-order mark", () => {
    expect(parseNotebook(`\uFEFF${withIds}`).ok).toBe(true);
  });

  it("refuses invalid JSON and cells without a text source, as the CLI does", () => {
    expect(parseNotebook("{ not json")).toEqual({ ok: false, problem: "Notebook is not valid JSON." });
    expect(parseNotebook("[]").ok).toBe(false);
    expect(parseNotebook('{"cells": {}}').ok).toBe(false);
    expect(parseNotebook('{"cells": [{"cell_type": "code"}]}').ok).toBe(false);
    expect(parseNotebook('{"cells": [{"source": ["a", 1]}]}').ok).toBe(false);
    expect(parseNotebook('{"cells": [null]}').ok).toBe(false);
  });
});

describe("cellSource", () => {
  it("joins an array of lines with nothing and keeps a string as it is", () => {
    expect(cellSource({ source: ["print('hello')\n", "x = 1"] })).toBe("print('hello')\nx = 1");
    expect(cellSource({ source: "# Title\n" })).toBe("# Title\n");
    expect(cellSource({ source: [] })).toBe("");
  });
});

describe("findNotebookCell (the CLI's lookup)", () => {
  const cells: NotebookCell[] = [
    { id: "cell-a", source: "" },
    { id: "cell-b", source: "" },
    { id: "cell-0", source: "" },
  ];

  it("finds a cell by its id", () => {
    expect(findNotebookCell(cells, "cell-b")).toEqual({ ok: true, index: 1 });
  });

  it("an id wins over the cell-N index reading", () => {
    expect(findNotebookCell(cells, "cell-0")).toEqual({ ok: true, index: 2 });
  });

  it("reads cell-N as a 0-based index when no cell has that id, ids or not", () => {
    expect(findNotebookCell(cells, "cell-1")).toEqual({ ok: true, index: 1 });
    expect(findNotebookCell([{ source: "a" }, { source: "b" }], "cell-1")).toEqual({ ok: true, index: 1 });
  });

  it("reports an unknown id and an index past the end with the CLI's words", () => {
    expect(findNotebookCell(cells, "nope")).toEqual({
      ok: false,
      problem: 'Cell with ID "nope" not found in notebook.',
    });
    expect(findNotebookCell(cells, "cell-7")).toEqual({
      ok: false,
      problem: "Cell with index 7 does not exist in notebook.",
    });
  });

  it("insert goes after the named cell, or first without one; replace and delete need one", () => {
    expect(findNotebookCell(cells, "cell-a", "insert")).toEqual({ ok: true, index: 1 });
    expect(findNotebookCell(cells, undefined, "insert")).toEqual({ ok: true, index: 0 });
    expect(findNotebookCell(cells, undefined, "replace").ok).toBe(false);
    expect(findNotebookCell(cells, "", "delete").ok).toBe(false);
  });
});

describe("targetNotebookCell", () => {
  it("replace: the cell's source (array joined) against new_source", () => {
    expect(targetNotebookCell(withIds, nbEdit({ cell_id: "cell-a", new_source: "print('bye')\n" }))).toEqual({
      ok: true,
      cell: { editMode: "replace", index: 0, label: 'cell "cell-a" · code', language: "python" },
      original: "print('hello')\nx = 1",
      proposed: "print('bye')\n",
    });
  });

  it("replace by cell-N on a notebook without ids, string and array sources alike", () => {
    const target = targetNotebookCell(withoutIds, nbEdit({ cell_id: "cell-1", new_source: "b = 3\n" }));
    expect(target).toMatchObject({
      ok: true,
      cell: { index: 1, label: 'cell "cell-1" · code' },
      original: "b = 2\n",
      proposed: "b = 3\n",
    });
  });

  it("replace names the cell by its real id when found by index, and shows a type change", () => {
    const target = targetNotebookCell(withIds, nbEdit({ cell_id: "cell-1", new_source: "x", cell_type: "code" }));
    expect(target).toMatchObject({
      ok: true,
      cell: { index: 1, label: 'cell "cell-b" · markdown → code', language: "python" },
      original: "# Title\n",
    });
    expect(targetNotebookCell(withIds, nbEdit({ cell_id: "cell-b", new_source: "## T" }))).toMatchObject({
      cell: { label: 'cell "cell-b" · markdown', language: "markdown" },
    });
  });

  it("insert: no cell yet (original null), the new source on the right", () => {
    const input = nbEdit({ cell_id: "cell-a", new_source: "## New", cell_type: "markdown", edit_mode: "insert" });
    expect(targetNotebookCell(withIds, input)).toEqual({
      ok: true,
      cell: { editMode: "insert", index: 1, label: 'new markdown cell after cell "cell-a"', language: "markdown" },
      original: null,
      proposed: "## New",
    });
    expect(
      targetNotebookCell(withoutIds, nbEdit({ new_source: "top", cell_type: "code", edit_mode: "insert" })),
    ).toMatchObject({ ok: true, cell: { index: 0, label: "new code cell at the top" }, original: null });
  });

  it("insert without cell_type is refused, as the CLI does", () => {
    expect(targetNotebookCell(withIds, nbEdit({ new_source: "x", edit_mode: "insert" }))).toEqual({
      ok: false,
      problem: "Cell type is required when using edit_mode=insert.",
    });
  });

  it("delete: the cell's source against nothing, whatever new_source says", () => {
    expect(
      targetNotebookCell(withIds, nbEdit({ cell_id: "cell-b", new_source: "ignored", edit_mode: "delete" })),
    ).toEqual({
      ok: true,
      cell: { editMode: "delete", index: 1, label: 'cell "cell-b" · markdown · deleted', language: "markdown" },
      original: "# Title\n",
      proposed: "",
    });
  });

  it("problems: missing notebook, invalid JSON, unknown cell, attachments on a cell turned to code", () => {
    expect(targetNotebookCell(null, nbEdit({ cell_id: "cell-a" }))).toEqual({
      ok: false,
      problem: "Notebook file does not exist.",
    });
    expect(targetNotebookCell("{", nbEdit({ cell_id: "cell-a" }))).toEqual({
      ok: false,
      problem: "Notebook is not valid JSON.",
    });
    expect(targetNotebookCell(withIds, nbEdit({ cell_id: "zzz" }))).toEqual({
      ok: false,
      problem: 'Cell with ID "zzz" not found in notebook.',
    });
    const attached = notebookFile([
      { cell_type: "markdown", id: "m", metadata: {}, source: "![x](attachment:x.png)", attachments: { "x.png": {} } },
    ]);
    expect(targetNotebookCell(attached, nbEdit({ cell_id: "m", new_source: "1", cell_type: "code" })).ok).toBe(false);
    expect(targetNotebookCell(attached, nbEdit({ cell_id: "m", new_source: "text" })).ok).toBe(true);
  });
});

describe("NotebookEdit through proposeFileChange and buildReviewedInput", () => {
  const replaceA = nbEdit({ cell_id: "cell-a", new_source: "print('bye')\n", cell_type: "code", edit_mode: "replace" });

  it("is a reviewable file tool whose path is notebook_path", () => {
    expect(isReviewableFileTool("NotebookEdit")).toBe(true);
    expect(reviewedFilePath("NotebookEdit", replaceA)).toBe(NB);
    expect(reviewedFilePath("NotebookEdit", { file_path: "/x" })).toBe("");
  });

  it("proposes the cell, not the file", () => {
    expect(proposeFileChange("NotebookEdit", replaceA, withIds)).toEqual({
      ok: true,
      tool: "NotebookEdit",
      filePath: NB,
      exists: true,
      original: "print('hello')\nx = 1",
      proposed: "print('bye')\n",
      cell: { editMode: "replace", index: 0, label: 'cell "cell-a" · code', language: "python" },
    });
    expect(
      proposeFileChange("NotebookEdit", nbEdit({ new_source: "n", cell_type: "code", edit_mode: "insert" }), withIds),
    ).toMatchObject({ ok: true, exists: false, original: "", proposed: "n" });
  });

  it("reports problems with the notebook path, never throws", () => {
    expect(proposeFileChange("NotebookEdit", { notebook_path: NB }, withIds)).toMatchObject({
      ok: false,
      filePath: NB,
      problem: expect.stringContaining("Not a valid NotebookEdit input"),
    });
    expect(proposeFileChange("NotebookEdit", { ...replaceA, cell_id: "zzz" }, withIds)).toMatchObject({
      ok: false,
      filePath: NB,
      problem: 'Cell with ID "zzz" not found in notebook.',
    });
    expect(proposeFileChange("NotebookEdit", replaceA, null)).toMatchObject({ ok: false });
    expect(proposeFileChange("NotebookEdit", replaceA, "not json")).toMatchObject({ ok: false });
  });

  it("the proposal as it stands: the model's input unchanged", () => {
    expect(
      buildReviewedInput({ toolName: "NotebookEdit", input: replaceA, disk: withIds, reviewed: "print('bye')\n" }),
    ).toEqual({ ok: true, updatedInput: replaceA, strategy: "as-proposed", userModified: false });
  });

  it("a modified review becomes new_source; every other field is kept", () => {
    const input = { ...replaceA, extra: "kept" };
    const result = buildReviewedInput({ toolName: "NotebookEdit", input, disk: withIds, reviewed: "print('mine')" });
    expect(result).toEqual({
      ok: true,
      updatedInput: { ...input, new_source: "print('mine')" },
      strategy: "new-source",
      userModified: true,
    });
    if (!result.ok) throw new Error(result.problem);
    // The CLI accepts the answer, and running it leaves the reviewed text in the cell.
    expect(
      ZPermissionDecision.safeParse(allowRequest({ tool_name: "NotebookEdit", input }, result.updatedInput)).success,
    ).toBe(true);
    const cells = applyCliNotebookEdit(withIds, ZNotebookEditInput.parse(result.updatedInput));
    expect(cellSource(cells[0]!)).toBe("print('mine')");
    expect(cells[1]).toEqual({ cell_type: "markdown", id: "cell-b", metadata: {}, source: "# Title\n" });
  });

  it("insert: the reviewed text is the new cell's source", () => {
    const input = nbEdit({ cell_id: "cell-a", new_source: "## A", cell_type: "markdown", edit_mode: "insert" });
    const result = buildReviewedInput({ toolName: "NotebookEdit", input, disk: withIds, reviewed: "## B\n" });
    expect(result).toMatchObject({ ok: true, updatedInput: { ...input, new_source: "## B\n" } });
    if (!result.ok) throw new Error(result.problem);
    const cells = applyCliNotebookEdit(withIds, ZNotebookEditInput.parse(result.updatedInput));
    expect(cells.map(cellSource)).toEqual(["print('hello')\nx = 1", "## B\n", "# Title\n"]);
  });

  it("delete: allowed as it stands, refused with any text", () => {
    const input = nbEdit({ cell_id: "cell-b", new_source: "", edit_mode: "delete" });
    expect(buildReviewedInput({ toolName: "NotebookEdit", input, disk: withIds, reviewed: "" })).toMatchObject({
      ok: true,
      updatedInput: input,
      userModified: false,
    });
    expect(buildReviewedInput({ toolName: "NotebookEdit", input, disk: withIds, reviewed: "# Ti" })).toMatchObject({
      ok: false,
      code: "delete-edited",
    });
  });

  it("refuses invalid input and a cell that is gone", () => {
    expect(
      buildReviewedInput({ toolName: "NotebookEdit", input: { notebook_path: NB }, disk: withIds, reviewed: "x" }),
    ).toMatchObject({ ok: false, code: "invalid-input" });
    expect(
      buildReviewedInput({
        toolName: "NotebookEdit",
        input: { ...replaceA, cell_id: "gone" },
        disk: withIds,
        reviewed: "x",
      }),
    ).toMatchObject({ ok: false, code: "notebook-cell" });
    expect(buildReviewedInput({ toolName: "NotebookEdit", input: replaceA, disk: null, reviewed: "x" })).toMatchObject({
      ok: false,
      code: "notebook-cell",
    });
  });
});

describe("property: the cell after the CLI runs the reviewed input === reviewed", () => {
  it("random cells, random hand edits and hunk selections, other cells untouched", () => {
    for (let seed = 1; seed <= 400; seed++) {
      const r = createRandom(seed * 31337);
      const sources = Array.from({ length: 1 + r.int(4) }, () => randomText(r, { maxLines: 8 }));
      const disk = notebookFile(
        sources.map((text, i) => ({
          cell_type: "code",
          id: `c${i}`,
          metadata: {},
          outputs: [],
          // nbformat writes lines as an array; some tools write one string.
          source: r.bool() ? text.split(/(?<=\n)/) : text,
        })),
      );
      const index = r.int(sources.length);
      const model = nbEdit({
        cell_id: r.bool() ? `c${index}` : `cell-${index}`,
        new_source: randomEdit(r, sources[index]!),
      });
      const proposal = proposeFileChange("NotebookEdit", model, disk);
      const ctx = `seed ${seed}`;
      if (!proposal.ok) throw new Error(`${ctx}: ${proposal.problem}`);
      expect(proposal.original, ctx).toBe(sources[index]);
      const hunks = diffHunks(proposal.original, proposal.proposed);
      const picked = r.bool()
        ? applyHunkSelection(
            proposal.original,
            proposal.proposed,
            hunks.filter(() => r.bool()).map((h) => h.id),
          )
        : randomEdit(r, proposal.proposed);
      const result = buildReviewedInput({ toolName: "NotebookEdit", input: model, disk, reviewed: picked });
      if (!result.ok) throw new Error(`${ctx}: ${result.problem}`);
      const cells = applyCliNotebookEdit(disk, ZNotebookEditInput.parse(result.updatedInput));
      expect(cells.map(cellSource), ctx).toEqual(sources.map((s, i) => (i === index ? picked : s)));
    }
  });
});
