/**
 * What an approval card shows that is read from disk: the review of an Edit/Write/NotebookEdit
 * (the file, inside the workspace only, against the proposal) and ExitPlanMode's plan file.
 *
 * Owns: those reads and building the `FileReview`. Must not: touch the database or the pending
 * queue, or throw for a missing or unreadable file (the review says what the problem is).
 */
import { proposeFileChange, isReviewableFileTool, reviewedFilePath } from "@/server/domain/approval/file-edit-review";
import { diffWireHunks } from "@/server/domain/approval/wire-hunks";
import type { CanUseToolRequest, JsonObject } from "@/server/shared/claude-protocol/messages";
import type { FileReview } from "@/server/shared/wire/approval";
import { locateInWorkspace } from "@/server/workspace-fs/locate-in-workspace";
import { readReviewFile } from "@/server/workspace-fs/read-review-file";

/**
 * The review of an Edit/Write/NotebookEdit: the file on disk (inside the workspace only), or the
 * notebook cell, against the proposal.
 */
export async function buildReview(
  request: CanUseToolRequest,
  rootPath: string,
): Promise<{ review: FileReview | null; disk: string | null }> {
  const tool = request.tool_name;
  if (!isReviewableFileTool(tool)) return { review: null, disk: null };
  const filePath = reviewedFilePath(tool, request.input);
  const located = await locateInWorkspace(rootPath, filePath);
  if (!located.ok) {
    return {
      review: { filePath, original: null, proposed: "", hunks: [], problem: located.problem },
      disk: null,
    };
  }
  const read = await readReviewFile(located.path);
  if (!read.ok) {
    return { review: { filePath, original: null, proposed: "", hunks: [], problem: read.problem }, disk: null };
  }
  const disk = read.text;
  const proposal = proposeFileChange(tool, request.input, disk);
  if (!proposal.ok) {
    return { review: { filePath, original: disk, proposed: disk ?? "", hunks: [], problem: proposal.problem }, disk };
  }
  return {
    review: {
      filePath: proposal.filePath,
      original: proposal.exists ? proposal.original : null,
      proposed: proposal.proposed,
      hunks: diffWireHunks(proposal.original, proposal.proposed),
      ...(proposal.cell ? { cell: proposal.cell } : {}),
    },
    disk,
  };
}

/** ExitPlanMode's plan: the input's `plan`, else the plan file it names (inside the workspace). */
export async function readPlan(input: JsonObject, rootPath: string): Promise<string | null> {
  if (typeof input.plan === "string" && input.plan.trim() !== "") return input.plan;
  const file = typeof input.planFilePath === "string" ? input.planFilePath : undefined;
  if (!file) return null;
  const located = await locateInWorkspace(rootPath, file);
  if (!located.ok) return null;
  const read = await readReviewFile(located.path);
  return read.ok ? read.text : null;
}
