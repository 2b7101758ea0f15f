/**
 * What an approval card shows that is read from disk: the review of an Edit/Write/NotebookEdit
 * (the file, inside the workspace only, against the proposal) and ExitPlanMode's plan file.
 *
 * Owns: building the `FileReview` from those reads, which the workspace's files door makes
 * (`files.readForReview`: the path located inside the workspace, the file read without
 * following a link, blocking on a FIFO or filling memory). Must not: touch the database or the
 * pending queue, or throw for a missing or unreadable file (the review says what the problem is).
 */
import { proposeFileChange, isReviewableFileTool, reviewedFilePath } from "@/server/domain/approval/file-edit-review";
import { diffWireHunks } from "@/server/domain/approval/wire-hunks";
import type { CanUseToolRequest, JsonObject } from "@/server/shared/claude-protocol/messages";
import type { FileReview } from "@/server/shared/wire/approval";
import { workspaceDoor, type DoorScope } from "@/server/workspace-agent";

/** Where the card's files are read: the workspace's files door, or `null` when its directory is missing. */
export type ReviewScope = DoorScope | null;

/** The longest path the door takes (a longer one cannot name a readable file). */
const maxReviewPathLength = 8192;

type ReviewRead = { ok: true; text: string | null } | { ok: false; problem: string };

/** The file the CLI named, read inside the workspace by its door; a problem in words otherwise. */
async function readInWorkspace(scope: ReviewScope, filePath: string): Promise<ReviewRead> {
  if (filePath === "") return { ok: false, problem: "The request names no file." };
  if (scope === null) return { ok: false, problem: "The workspace directory is missing." };
  if (filePath.length > maxReviewPathLength || filePath.includes("\0")) return { ok: false, problem: "The file cannot be read." };
  try {
    const answer = await workspaceDoor().call(scope, "files.readForReview", { filePath });
    return answer.located ? answer.read : { ok: false, problem: answer.problem };
  } catch {
    // the door could not answer (stopped, timed out): the card says so rather than showing nothing
    return { ok: false, problem: "The file cannot be read." };
  }
}

/**
 * The review of an Edit/Write/NotebookEdit: the file on disk (inside the workspace only), or the
 * notebook cell, against the proposal.
 */
export async function buildReview(
  request: CanUseToolRequest,
  scope: ReviewScope,
): Promise<{ review: FileReview | null; disk: string | null }> {
  const tool = request.tool_name;
  if (!isReviewableFileTool(tool)) return { review: null, disk: null };
  const filePath = reviewedFilePath(tool, request.input);
  const read = await readInWorkspace(scope, filePath);
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
export async function readPlan(input: JsonObject, scope: ReviewScope): Promise<string | null> {
  if (typeof input.plan === "string" && input.plan.trim() !== "") return input.plan;
  const file = typeof input.planFilePath === "string" ? input.planFilePath : undefined;
  if (!file) return null;
  const read = await readInWorkspace(scope, file);
  return read.ok ? read.text : null;
}
