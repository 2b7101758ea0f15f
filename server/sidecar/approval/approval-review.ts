/**
 * What an approval card shows that is read from disk: the review of an Edit/Write/NotebookEdit
 * (the file, inside the workspace only, against the proposal) and ExitPlanMode's plan.
 *
 * Owns: building the `FileReview` from those reads, which the workspace's files door makes
 * (`files.readForReview`: the path located inside the workspace, the file read without
 * following a link, blocking on a FIFO or filling memory), and finding the plan (the request,
 * the plan file through the config directory's door `config.readPlan`, the model's streamed
 * call), saying plainly when there is none. Must not: touch the database or the
 * pending queue, or throw for a missing or unreadable file (the review says what the problem is).
 */
import path from "node:path";
import { proposeFileChange, isReviewableFileTool, reviewedFilePath } from "@/server/domain/approval/file-edit-review";
import { diffWireHunks } from "@/server/domain/approval/wire-hunks";
import type { CanUseToolRequest, JsonObject } from "@/server/shared/claude-protocol/messages";
import type { FileReview } from "@/server/shared/wire/approval";
import { configScope, workspaceDoor, type DoorScope } from "@/server/workspace-agent";

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

/** ExitPlanMode's plan as the card shows it: the text, and where it came from or why there is none. */
export interface PlanShown {
  text: string | null;
  /** Where the text came from, or why there is none, in words (null: the CLI's own plan, nothing to add). */
  note: string | null;
}

/** Where ExitPlanMode's plan is read, besides the request. */
export interface PlanSources {
  /** The workspace's files door (a plan file inside the workspace). */
  workspace: ReviewScope;
  /** The CLI's config directory (its `plans/<name>.md`); null when unknown. */
  configDir: string | null;
  /** The `plan` the model put in its tool call, as the CLI streamed it (the request may carry none). */
  streamedPlan?: string;
}

/** The plan file's name when `planFilePath` is `<configDir>/plans/<name>.md`; null otherwise. */
export function configPlanName(planFilePath: string, configDir: string | null): string | null {
  if (configDir === null || !path.isAbsolute(planFilePath)) return null;
  const file = path.resolve(planFilePath);
  if (path.dirname(file) !== path.join(path.resolve(configDir), "plans")) return null;
  const name = path.basename(file);
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}\.md$/.test(name) ? name : null;
}

const noPlanAdvice = "Approve only if you know what it will do, or use Keep planning to ask for the plan.";
const noPlan = `Claude Code sent no plan with this request: it kept no plan file, and the model's call carried no plan text. ${noPlanAdvice}`;

const problemWords: Record<string, string> = {
  absent: "it is not there",
  symlink: "it is a link",
  directory: "it is a folder",
  special: "it is not a regular file",
  too_large: "it is too large to show",
  unreadable: "it cannot be read",
};

/** The plan file in the CLI's config directory, read by that directory's door. */
async function readConfigPlan(configDir: string, name: string): Promise<ReviewRead> {
  try {
    const read = await workspaceDoor().call(await configScope(configDir), "config.readPlan", { name });
    if (read.kind === "file") return { ok: true, text: read.text };
    return { ok: false, problem: problemWords[read.kind === "absent" ? "absent" : read.type] ?? "it cannot be read" };
  } catch {
    return { ok: false, problem: "it cannot be read" };
  }
}

/**
 * ExitPlanMode's plan, never guessed: the input's `plan` (the CLI read it from its plan file), else
 * the plan file it names (in its config directory or the workspace), else the plan the model put in
 * its call as streamed (CLI 2.1.332 drops it from the request when no plan file exists), else a
 * plain statement that there is none.
 */
export async function readPlan(input: JsonObject, sources: PlanSources): Promise<PlanShown> {
  const file = typeof input.planFilePath === "string" && input.planFilePath !== "" ? input.planFilePath : undefined;
  const fileLabel = file === undefined ? undefined : path.basename(file);
  if (typeof input.plan === "string" && input.plan.trim() !== "") {
    return { text: input.plan, note: fileLabel ? `From Claude Code's plan file ${fileLabel}.` : null };
  }
  let fileProblem: string | undefined;
  if (file !== undefined) {
    const name = configPlanName(file, sources.configDir);
    const read = name !== null ? await readConfigPlan(sources.configDir!, name) : await readInWorkspace(sources.workspace, file);
    if (read.ok && read.text !== null && read.text.trim() !== "") {
      return { text: read.text, note: `From Claude Code's plan file ${fileLabel}.` };
    }
    fileProblem = read.ok
      ? `Claude Code named the plan file ${fileLabel}, but it is empty.`
      : `Claude Code named the plan file ${fileLabel}, but ${name !== null ? read.problem : "it is neither in its plans folder nor readable in the workspace"}.`;
  }
  if (sources.streamedPlan !== undefined && sources.streamedPlan.trim() !== "") {
    return {
      text: sources.streamedPlan,
      note:
        fileProblem ??
        "Claude Code kept no plan file for this request; this is the plan the model wrote in its call to leave plan mode.",
    };
  }
  if (fileProblem === undefined) return { text: null, note: noPlan };
  return { text: null, note: `${fileProblem} The model's call carried no plan text either. ${noPlanAdvice}` };
}
