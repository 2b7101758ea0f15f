import { z } from "zod";
import type { NotebookCellReview, NotebookEditMode } from "@/server/shared/wire/approval";

/**
 * `NotebookEdit` seen one cell at a time: which cell a request targets and what its source is
 * now and after the edit. The review diffs that source, never the .ipynb JSON, because the one
 * input field the approver can reshape is `new_source`, which the CLI writes into the cell
 * verbatim (as a string, whatever the shape of the old source).
 *
 * Mirrors CLI 2.1.332 (bundled source, checked against the real CLI):
 * - the notebook must parse as JSON with a `cells` array whose every cell is an object with a
 *   `source` that is a string or an array of strings (array pieces are joined with nothing);
 * - `cell_id` is first matched against the cells' `id` fields; failing that, `cell-N` means the
 *   cell at 0-based index N, ids or not (the CLI's Read names id-less cells that way);
 * - `replace` (the default) and `delete` need a `cell_id`; `insert` puts the new cell after the
 *   one named, or first when none is named, and needs `cell_type`;
 * - `replace` with `cell_type: "code"` refuses a non-code cell that carries attachments.
 * The CLI checks the id and the type before it asks for permission, so a request that gets
 * here normally names a real cell; the checks are repeated because the file may have changed.
 */

/** `NotebookEdit` input (extra fields are kept when rewriting). */
export const ZNotebookEditInput = z.looseObject({
  notebook_path: z.string().min(1),
  cell_id: z.string().optional(),
  new_source: z.string(),
  cell_type: z.enum(["code", "markdown"]).optional(),
  edit_mode: z.enum(["replace", "insert", "delete"]).optional(),
});
/** `NotebookEdit` input. */
export type NotebookEditInput = z.infer<typeof ZNotebookEditInput>;

/** One cell as the CLI accepts it (other fields are not looked at). */
export interface NotebookCell {
  id?: unknown;
  cell_type?: unknown;
  source: string | string[];
  attachments?: unknown;
}

/** The cells of a notebook file and its language, or why the CLI would refuse the file. */
export type ParsedNotebook = { ok: true; cells: NotebookCell[]; language: string } | { ok: false; problem: string };

/** The cell a request edits, or why the CLI would refuse it. */
export type NotebookTarget =
  | {
      ok: true;
      cell: NotebookCellReview;
      /** The cell's source now; null on insert (no cell yet). */
      original: string | null;
      /** The cell's source after the edit ("" on delete: the cell is gone). */
      proposed: string;
    }
  | { ok: false; problem: string };

const BOM = "\uFEFF";

/** The notebook's cells as the CLI reads them from the file's raw text. */
export function parseNotebook(raw: string): ParsedNotebook {
  let value: unknown;
  try {
    value = JSON.parse(raw.startsWith(BOM) ? raw.slice(1) : raw);
  } catch {
    return { ok: false, problem: "Notebook is not valid JSON." };
  }
  const cells = (value as { cells?: unknown } | null)?.cells;
  if (typeof value !== "object" || value === null || !Array.isArray(cells) || !cells.every(isCell)) {
    return { ok: false, problem: "The notebook's cells are not in the nbformat shape (each needs a text `source`)." };
  }
  const metadata = (value as { metadata?: { language_info?: { name?: unknown } } }).metadata;
  const name = metadata?.language_info?.name;
  return { ok: true, cells, language: typeof name === "string" && name !== "" ? name : "python" };
}

/** A cell's source as one string (nbformat allows an array of lines). */
export function cellSource(cell: NotebookCell): string {
  return Array.isArray(cell.source) ? cell.source.join("") : cell.source;
}

/**
 * The CLI's cell lookup: the index of the cell to replace or delete, or for insert the index the
 * new cell will take.
 */
export function findNotebookCell(
  cells: readonly NotebookCell[],
  cellId: string | undefined,
  editMode: NotebookEditMode = "replace",
): { ok: true; index: number } | { ok: false; problem: string } {
  const insert = editMode === "insert";
  if (!cellId) {
    return insert
      ? { ok: true, index: 0 }
      : { ok: false, problem: "Cell ID must be specified when not inserting a new cell." };
  }
  let index = cells.findIndex((c) => c.id === cellId);
  if (index === -1) {
    const digits = /^cell-(\d+)$/.exec(cellId)?.[1];
    if (digits === undefined) return { ok: false, problem: `Cell with ID "${cellId}" not found in notebook.` };
    index = Number.parseInt(digits, 10);
    if (!cells[index]) return { ok: false, problem: `Cell with index ${index} does not exist in notebook.` };
  }
  return { ok: true, index: insert ? index + 1 : index };
}

/** The cell a NotebookEdit request targets, given the notebook's raw text (null when missing). */
export function targetNotebookCell(disk: string | null, input: NotebookEditInput): NotebookTarget {
  if (disk === null) return { ok: false, problem: "Notebook file does not exist." };
  const editMode = input.edit_mode ?? "replace";
  if (editMode === "insert" && !input.cell_type) {
    return { ok: false, problem: "Cell type is required when using edit_mode=insert." };
  }
  const notebook = parseNotebook(disk);
  if (!notebook.ok) return notebook;
  const found = findNotebookCell(notebook.cells, input.cell_id, editMode);
  if (!found.ok) return found;
  const { index } = found;

  if (editMode === "insert") {
    const type = input.cell_type ?? "code";
    const before = index === 0 ? undefined : notebook.cells[index - 1];
    const where = before === undefined ? "at the top" : `after ${nameOf(before, index - 1)}`;
    return {
      ok: true,
      cell: { editMode, index, label: `new ${type} cell ${where}`, language: languageOf(type, notebook.language) },
      original: null,
      proposed: input.new_source,
    };
  }

  const cell = notebook.cells[index]!;
  const type = typeof cell.cell_type === "string" ? cell.cell_type : "code";
  const original = cellSource(cell);
  if (editMode === "delete") {
    return {
      ok: true,
      cell: {
        editMode,
        index,
        label: `${nameOf(cell, index)} · ${type} · deleted`,
        language: languageOf(type, notebook.language),
      },
      original,
      proposed: "",
    };
  }
  const newType = input.cell_type ?? type;
  if (newType === "code" && type !== "code" && hasAttachments(cell)) {
    return {
      ok: false,
      problem:
        "The notebook would not change: this cell has attachments, which a code cell cannot hold. " +
        "Deny and ask for an insert, or for an edit that keeps the cell's type.",
    };
  }
  const kind = newType === type ? type : `${type} → ${newType}`;
  return {
    ok: true,
    cell: {
      editMode,
      index,
      label: `${nameOf(cell, index)} · ${kind}`,
      language: languageOf(newType, notebook.language),
    },
    original,
    proposed: input.new_source,
  };
}

function isCell(value: unknown): value is NotebookCell {
  if (typeof value !== "object" || value === null) return false;
  const source = (value as { source?: unknown }).source;
  return typeof source === "string" || (Array.isArray(source) && source.every((s) => typeof s === "string"));
}

function hasAttachments(cell: NotebookCell): boolean {
  const a = cell.attachments;
  return typeof a === "object" && a !== null && Object.keys(a).length > 0;
}

/** The cell's id when it has one, else the `cell-N` name the CLI's Read gives it. */
function nameOf(cell: NotebookCell, index: number): string {
  return `cell "${typeof cell.id === "string" && cell.id !== "" ? cell.id : `cell-${index}`}"`;
}

function languageOf(cellType: string, notebookLanguage: string): string {
  if (cellType === "markdown") return "markdown";
  if (cellType === "code") return notebookLanguage.toLowerCase();
  return "plaintext";
}
