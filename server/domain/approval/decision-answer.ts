/**
 * The approval policy's last step, pure: what the CLI is told for a person's decision on a pending
 * tool request (server/sidecar/approval/approval-service.ts calls it when someone decides).
 *
 * Owns: turning a wire `Decision` and what the card showed into a `PermissionDecision`, the file
 * review record, and the workspace rules to remember. Must not: read files or the database, or
 * check who decides (approval-state's `decideApproval` does).
 */
import type { PermissionDecision } from "@/server/shared/claude-protocol/encode";
import type { CanUseToolRequest, JsonObject } from "@/server/shared/claude-protocol/messages";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { Decision, FileReview } from "@/server/shared/wire/approval";
import {
  ALL_CHANGES_REJECTED_MESSAGE,
  allowAndRemember,
  allowBashCommand,
  allowRequest,
  answerQuestions,
  approvePlan,
  denyRequest,
  keepPlanning,
  RememberScope,
  type WorkspaceRule,
} from "./answers";
import type { FileReviewRecord } from "./approval-state";
import { buildReviewedInput, isReviewableFileTool, type FileTool } from "./file-edit-review";

/** A pending question as its deciders saw it. */
export interface PendingQuestion {
  request: CanUseToolRequest;
  /** The review the card showed (Edit/Write/NotebookEdit), or null. */
  review: FileReview | null;
  /** The file's raw text when the request was shown, null when missing or not a file tool. */
  disk: string | null;
}

/** What a decision becomes. */
export interface DecisionAnswer {
  answer: PermissionDecision;
  review: FileReviewRecord | null;
  workspaceRules: WorkspaceRule[];
}

/**
 * The CLI answer for a person's decision on a pending question: deny (or keep planning), allow
 * as asked, allow with the reviewed file text / the edited Bash command / the answers given, and
 * the workspace rules to remember. Throws `invalid_payload` when a reviewed text cannot be
 * applied to the tool's input.
 */
export function answerFor(pending: PendingQuestion, decision: Decision): DecisionAnswer {
  const { request } = pending;
  const tool = request.tool_name;
  if (decision.behavior === "deny") {
    if (tool === "ExitPlanMode" && !decision.stop) {
      return { answer: keepPlanning(decision.message), review: null, workspaceRules: [] };
    }
    return {
      answer: denyRequest({ message: decision.message, stop: decision.stop }),
      review: null,
      workspaceRules: [],
    };
  }
  let updatedInput: JsonObject | undefined;
  let review: FileReviewRecord | null = null;
  const fileReview = pending.review;
  if (isReviewableFileTool(tool) && decision.reviewedText !== undefined && fileReview && !fileReview.problem) {
    const reviewed = decision.reviewedText;
    // The review's left side: the file, or for NotebookEdit the cell (null: none yet).
    const original = fileReview.original;
    if (original !== null && reviewed === original && reviewed !== fileReview.proposed) {
      return { answer: denyRequest({ message: ALL_CHANGES_REJECTED_MESSAGE }), review: null, workspaceRules: [] };
    }
    const built = buildReviewedInput({
      toolName: tool as FileTool,
      input: request.input,
      disk: pending.disk,
      reviewed,
    });
    if (!built.ok) throw new AppError(ErrorCode.invalidPayload, built.problem);
    updatedInput = built.updatedInput;
    review = { filePath: fileReview.filePath, proposed: fileReview.proposed, approved: reviewed };
  } else if (tool === "Bash" && typeof decision.updatedInput?.command === "string") {
    updatedInput = allowBashCommand(request, decision.updatedInput.command).updatedInput as JsonObject;
  } else if (tool === "AskUserQuestion" && decision.updatedInput?.answers !== undefined) {
    const answers = decision.updatedInput.answers as Record<string, string | string[]>;
    updatedInput = answerQuestions(request, answers).updatedInput as JsonObject;
  } else if (tool === "ExitPlanMode" && !decision.remember) {
    return { answer: approvePlan(request), review: null, workspaceRules: [] };
  } else if (decision.updatedInput !== undefined) {
    updatedInput = decision.updatedInput as JsonObject;
  }
  if (decision.remember) {
    const remembered = allowAndRemember(request, {
      suggestionIndex: decision.remember.index,
      scope: decision.remember.scope === "workspace" ? RememberScope.workspace : RememberScope.session,
      updatedInput,
    });
    return { answer: remembered.decision, review, workspaceRules: remembered.workspaceRules };
  }
  return { answer: allowRequest(request, updatedInput), review, workspaceRules: [] };
}
