/**
 * How a file review is presented: the editor language, whether the right side can be changed,
 * the badge next to the path, and the approved text of a decided card. A NotebookEdit review is
 * one cell's source, so the cell decides the language and a deleted cell cannot be edited.
 */
import type { FileReview } from "@/server/shared/wire/approval";
import { relativePath } from "@/components/session/format";
import { languageForPath } from "./apply-hunks";

/** The Monaco language of both sides. */
export function reviewLanguage(review: FileReview): string {
  return review.cell?.language ?? languageForPath(review.filePath);
}

/** False when only allow or deny make sense: a NotebookEdit delete removes the whole cell. */
export function isReviewEditable(review: FileReview): boolean {
  return review.cell?.editMode !== "delete";
}

/** What the header says about the target besides its path. */
export function reviewBadge(review: FileReview): "new file" | "new cell" | "deleted cell" | undefined {
  if (review.cell?.editMode === "delete") return "deleted cell";
  if (review.original !== null) return undefined;
  return review.cell ? "new cell" : "new file";
}

/** The path line: the file, and for a notebook the cell under review. */
export function reviewTitle(review: FileReview, root?: string): string {
  const file = relativePath(review.filePath, root);
  return review.cell ? `${file} · ${review.cell.label}` : file;
}

/**
 * The right side of a decided card when the approved version differed from the proposal: the
 * text the tool got (Write's `content`, NotebookEdit's `new_source`); undefined shows the proposal.
 */
export function approvedReviewText(toolName: string, finalInput: Record<string, unknown> | null): string | undefined {
  if (!finalInput) return undefined;
  const text = toolName === "NotebookEdit" ? finalInput.new_source : finalInput.content;
  return typeof text === "string" ? text : undefined;
}
