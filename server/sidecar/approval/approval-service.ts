/**
 * The approval queue: answers the CLI's `can_use_tool` questions for the session hub. Each
 * question is stored before anyone is told, routed to the inbox of every member allowed to
 * decide, and answered with exactly what the first decider chose, or with a deny when the
 * workspace's deadline passes (the server owns approval time: the CLI waits forever).
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import {
  addPermissionRules,
  cancelLeftoverApprovals,
  findApproval,
  findApprovalContext,
  findLastAssistantText,
  findRoleForSession,
  insertApproval,
  insertAuditLog,
  listRecentApprovals,
  settleApproval,
  type ApprovalContext,
  type ApprovalRow,
} from "@/server/db/approvals";
import {
  ALL_CHANGES_REJECTED_MESSAGE,
  allowAndRemember,
  allowBashCommand,
  allowRequest,
  answerQuestions,
  approvePlan,
  denyRequest,
  keepPlanning,
  matchesWorkspaceRule,
  RememberScope,
  ruleLabel,
  workspaceRulesFromSuggestion,
  type WorkspaceRule,
} from "@/server/domain/approval/answers";
import {
  cancelApproval,
  CancelReason,
  createApproval,
  decideApproval,
  describeCancelReason,
  expireApproval,
  mayDecide,
  routeApproval,
  type Approval,
  type FileReviewRecord,
  type PendingApproval,
} from "@/server/domain/approval/approval-state";
import {
  buildReviewedInput,
  isReviewableFileTool,
  proposeFileChange,
  reviewedFilePath,
  type FileTool,
} from "@/server/domain/approval/file-edit-review";
import { diffWireHunks } from "@/server/domain/approval/wire-hunks";
import { locateInWorkspace } from "@/server/workspace-fs/locate-in-workspace";
import { readReviewFile } from "./read-review-file";
import { parseRole } from "@/server/domain/workspace/roles";
import type { PermissionDecision } from "@/server/shared/claude-protocol/encode";
import type { CanUseToolRequest, JsonObject, PermissionUpdate } from "@/server/shared/claude-protocol/messages";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import {
  ApprovalFact,
  type ApprovalCount,
  type ApprovalList,
  type ApprovalResolved,
  type ApprovalStatus,
  type ApprovalView,
  type Decision,
  type FileReview,
  type RememberOption,
} from "@/server/shared/wire/approval";
import type { PermissionQuestion } from "@/server/sidecar/session/session-runner-contract";

/** Sends a fact to every socket of each user. */
export type NotifyUsers = (userIds: readonly string[], event: string, payload: unknown) => void;

export interface ApprovalServiceDeps {
  db: Db;
  log: Logger;
  notify: NotifyUsers;
  now?: () => number;
}

/** The person deciding. */
export interface Decider {
  id: string;
  name: string;
}

interface PendingEntry {
  approval: PendingApproval;
  request: CanUseToolRequest;
  context: ApprovalContext;
  recipients: string[];
  view: ApprovalView;
  /** The file's raw text when the request was shown (Edit/Write/NotebookEdit), null when missing. */
  disk: string | null;
  /** The deciders were told (the review is read); until then the approval is in no inbox. */
  shown: boolean;
  answer: (decision: PermissionDecision) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
  detachAbort: () => void;
}

/** How many decided approvals `approval:list` returns besides the pending ones. */
const recentLimit = 50;
/** Decide commands remembered for retries. */
const maxRememberedCommands = 2_000;

/** The approval queue of one sidecar. */
export class ApprovalService {
  private readonly pending = new Map<string, PendingEntry>();
  /** Views of approvals settled by this sidecar (they carry the review, which the row does not). */
  private readonly settledViews = new Map<string, ApprovalView>();
  private readonly commands = new Map<string, Promise<ApprovalView>>();
  private readonly now: () => number;
  private closed = false;

  constructor(private readonly deps: ApprovalServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * Approvals an earlier run left pending have nobody to answer them now: the CLI that asked
   * is gone with that run. Call once at start, before sessions run.
   */
  async cancelLeftovers(sidecarId?: string): Promise<number> {
    return cancelLeftoverApprovals(
      this.deps.db,
      describeCancelReason(CancelReason.sidecarRestarted),
      new Date(this.now()),
      sidecarId,
    );
  }

  /** The hub's permission decider. */
  readonly decidePermission = async (
    session: { sessionId: string; workspaceId: string },
    question: PermissionQuestion,
  ): Promise<PermissionDecision> => {
    const { request, requestId, signal } = question;
    const context = await this.contextOf(session.sessionId);
    if (!context) return denyRequest({ message: "Conduit could not find this session; nothing was allowed." });
    const now = this.now();

    const rule = context.rules.find((r) => matchesWorkspaceRule(r, request));
    if (rule) {
      const decision = allowRequest(request);
      await insertApproval(this.deps.db, {
        ...rowFields(randomUUID(), session.sessionId, requestId, request, now),
        status: "allowed",
        expiresAt: null,
        decidedAt: new Date(now),
        finalInput: null,
        message: `Allowed by the workspace rule ${ruleLabel(rule)}.`,
      }).catch((err: unknown) => this.deps.log.warn({ err }, "recording a rule-allowed approval failed"));
      return decision;
    }

    const id = randomUUID();
    const approval = createApproval({
      id,
      sessionId: session.sessionId,
      requestId,
      request,
      sessionStarterId: context.createdById,
      deadlineSeconds: context.workspace.approvalDeadlineSec,
      now,
    });
    // What the card shows is read while the row is written (latency: no file read waits on the
    // insert); the deciders are still told only after both.
    const shown = this.readShown(request, context.workspace.rootPath, session.sessionId, id);
    // Persist, then tell: a reload right after the fact must find the row.
    await insertApproval(this.deps.db, {
      ...rowFields(id, session.sessionId, requestId, request, now),
      status: "pending",
      expiresAt: approval.expiresAt === null ? null : new Date(approval.expiresAt),
    });
    const recipients = routeApproval({
      sessionStarterId: context.createdById,
      members: context.members.flatMap((m) => {
        const role = parseRole(m.role);
        return role ? [{ userId: m.userId, role }] : [];
      }),
    });

    return new Promise<PermissionDecision>((resolve) => {
      const entry: PendingEntry = {
        approval,
        request,
        context,
        recipients,
        view: viewOf(approval, context, { review: null, plan: null }),
        disk: null,
        shown: false,
        answer: resolve,
        timer: undefined,
        detachAbort: () => undefined,
      };
      // Register and arm the deadline without waiting for the read from disk: whatever the target
      // file is, the question is answered by the deadline at the latest.
      this.pending.set(id, entry);
      if (approval.expiresAt !== null) {
        entry.timer = setTimeout(() => void this.expire(id), Math.max(0, approval.expiresAt - this.now()));
      }
      const onAbort = () => void this.cancel(id, cancelReasonOf(signal.reason));
      signal.addEventListener("abort", onAbort, { once: true });
      entry.detachAbort = () => signal.removeEventListener("abort", onAbort);
      if (signal.aborted) onAbort();
      void this.show(entry, shown);
    });
  };

  /** Reads what the card shows: the file under review, the plan. Never rejects. */
  private async readShown(
    request: CanUseToolRequest,
    rootPath: string,
    sessionId: string,
    approvalId: string,
  ): Promise<{ review: FileReview | null; disk: string | null; plan: string | null }> {
    let review: FileReview | null = null;
    let disk: string | null = null;
    let plan: string | null = null;
    try {
      ({ review, disk } = await this.buildReview(request, rootPath));
      plan =
        request.tool_name === "ExitPlanMode"
          ? ((await readPlan(request.input, rootPath)) ??
            (await findLastAssistantText(this.deps.db, sessionId).catch(() => null)))
          : null;
    } catch (err) {
      this.deps.log.error({ err, approvalId }, "building an approval's review failed");
    }
    return { review, disk, plan };
  }

  /** Tells the deciders, once what the card shows is read. */
  private async show(entry: PendingEntry, shown: ReturnType<ApprovalService["readShown"]>): Promise<void> {
    const { context, approval } = entry;
    const { review, disk, plan } = await shown;
    // Settled meanwhile (expired, cancelled): its resolution already went out.
    if (this.pending.get(approval.id) !== entry) return;
    entry.view = viewOf(approval, context, { review, plan });
    entry.disk = disk;
    entry.shown = true;
    this.deps.notify(entry.recipients, ApprovalFact.requested, entry.view);
    this.sendCounts(entry.recipients);
  }

  /**
   * The session's workspace, members and rules, read fresh for every question (three flat
   * statements): a rule revoked or a member removed a moment ago counts for the next one.
   */
  private contextOf(sessionId: string): Promise<ApprovalContext | undefined> {
    return findApprovalContext(this.deps.db, sessionId);
  }

  /** The caller's inbox: their pending approvals and the recent decided ones. */
  async list(user: Decider): Promise<ApprovalList> {
    const pending = [...this.pending.values()]
      .filter((e) => e.shown && e.recipients.includes(user.id))
      .map((e) => e.view);
    const seen = new Set(pending.map((v) => v.id));
    const rows = await listRecentApprovals(this.deps.db, user.id, recentLimit);
    const decided: ApprovalView[] = [];
    for (const row of rows) {
      if (seen.has(row.id)) continue;
      // A pending row without a live entry belongs to another sidecar, or is about to settle.
      if (row.status === "pending") continue;
      decided.push(this.settledViews.get(row.id) ?? viewOfRow(row));
    }
    return { approvals: [...pending, ...decided], now: new Date(this.now()).toISOString() };
  }

  /**
   * Takes the user off pending approvals of workspaces where they may no longer decide (a role
   * lowered or a membership removed since the request was routed), and tells them the new count.
   */
  withdrawFrom(userId: string, decidesIn: ReadonlySet<string>): void {
    let changed = false;
    for (const entry of this.pending.values()) {
      if (!entry.recipients.includes(userId) || decidesIn.has(entry.view.workspace.id)) continue;
      entry.recipients = entry.recipients.filter((id) => id !== userId);
      changed = true;
    }
    if (changed) this.sendCounts([userId]);
  }

  /** Questions of this sidecar waiting for an answer (metrics). */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** The number of pending approvals routed to the user. */
  count(userId: string): ApprovalCount {
    let pending = 0;
    for (const entry of this.pending.values()) if (entry.shown && entry.recipients.includes(userId)) pending++;
    return { pending };
  }

  /** A person's decision; a retry with the same `commandId` gets the first outcome. */
  decide(user: Decider, approvalId: string, decision: Decision, commandId: string): Promise<ApprovalView> {
    const key = `${user.id}\u0000${commandId}`;
    const known = this.commands.get(key);
    if (known) return known;
    const outcome = this.runDecide(user, approvalId, decision);
    this.commands.set(key, outcome);
    if (this.commands.size > maxRememberedCommands) {
      const oldest = this.commands.keys().next();
      if (!oldest.done) this.commands.delete(oldest.value);
    }
    return outcome;
  }

  /** Stops the timers; pending questions are cancelled (their CLI is stopping with the hub). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.pending.keys()].map((id) => this.cancel(id, CancelReason.processExited)));
  }

  // -------------------------------------------------------------------------------------------

  private async runDecide(user: Decider, approvalId: string, decision: Decision): Promise<ApprovalView> {
    const entry = this.pending.get(approvalId);
    if (!entry) return this.refuseSettled(user, approvalId);
    const roleText = await findRoleForSession(this.deps.db, user.id, entry.approval.sessionId);
    if (roleText === undefined) {
      throw new AppError(ErrorCode.notFound, "No such approval, or you are not a member of its workspace.");
    }
    const role = parseRole(roleText) ?? null;
    if (!mayDecide(role)) {
      throw new AppError(ErrorCode.forbidden, "Only the workspace's owners and editors may answer tool requests.");
    }
    const now = this.now();
    const { answer, review, workspaceRules } = this.answerFor(entry, decision);
    let decided: Approval;
    try {
      decided = decideApproval(entry.approval, { userId: user.id, role, answer, review }, now);
    } catch (err) {
      if (err instanceof AppError && err.code === ErrorCode.expired) void this.expire(approvalId);
      throw err;
    }
    // Settled in memory first: the expiry timer or a second click now finds nothing pending.
    this.pending.delete(approvalId);
    this.release(entry);
    if (decided.status !== "allowed" && decided.status !== "denied")
      throw new AppError(ErrorCode.internal, "unreachable");
    const finalInput =
      decided.status === "allowed" && !sameJson(decided.answer.updatedInput, entry.approval.input)
        ? (decided.answer.updatedInput as Record<string, unknown>)
        : null;
    const message = decided.answer.behavior === "deny" ? decided.answer.message : null;
    const won = await settleApproval(this.deps.db, approvalId, {
      status: decided.status,
      decidedById: user.id,
      decidedAt: new Date(now),
      finalInput: finalInput === null ? null : JSON.stringify(finalInput),
      message,
    });
    if (!won) {
      // Another sidecar or a restart cancel settled the row: the CLI must still get an answer.
      entry.answer(decided.answer);
      return this.refuseSettled(user, approvalId);
    }
    if (workspaceRules.length > 0) {
      await addPermissionRules(this.deps.db, entry.context.workspace.id, user.id, workspaceRules);
    }
    entry.answer(decided.answer);
    const view: ApprovalView = {
      ...entry.view,
      status: decided.status,
      decidedBy: { id: user.id, name: user.name },
      decidedAt: new Date(now).toISOString(),
      message,
      finalInput,
      approvedText: review?.approved ?? null,
    };
    await insertAuditLog(this.deps.db, {
      actorId: user.id,
      action: `approval.${decided.status === "allowed" ? "allow" : "deny"}`,
      objectType: "approval",
      objectId: approvalId,
      workspaceId: entry.context.workspace.id,
      details: {
        sessionId: entry.approval.sessionId,
        toolName: entry.approval.toolName,
        proposed: entry.approval.input,
        approved: decided.status === "allowed" ? decided.answer.updatedInput : null,
        review: review ? { filePath: review.filePath, proposed: review.proposed, approved: review.approved } : null,
        message,
        interrupt: decided.answer.behavior === "deny" ? (decided.answer.interrupt ?? false) : false,
        rememberedRules: workspaceRules,
      },
    }).catch((err: unknown) => this.deps.log.error({ err, approvalId }, "writing the audit log failed"));
    this.announceSettled(entry, view);
    return view;
  }

  /** Builds the CLI answer for a decision on this entry. */
  private answerFor(
    entry: PendingEntry,
    decision: Decision,
  ): { answer: PermissionDecision; review: FileReviewRecord | null; workspaceRules: WorkspaceRule[] } {
    const { request } = entry;
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
    const fileReview = entry.view.review;
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
        disk: entry.disk,
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

  /** The refusal for a decision on an approval that is not pending here. */
  private async refuseSettled(user: Decider, approvalId: string): Promise<never> {
    const row = await findApproval(this.deps.db, approvalId);
    const role = row ? await findRoleForSession(this.deps.db, user.id, row.sessionId) : undefined;
    if (!row || role === undefined) {
      throw new AppError(ErrorCode.notFound, "No such approval, or you are not a member of its workspace.");
    }
    const parsed = parseRole(role);
    if (!parsed || parsed === "viewer") {
      throw new AppError(ErrorCode.forbidden, "Only the workspace's owners and editors may answer tool requests.");
    }
    if (row.status === "expired")
      throw new AppError(ErrorCode.expired, "This request expired before your answer arrived.");
    if (row.status === "pending") {
      throw new AppError(ErrorCode.unavailable, "This request is held by another server; try again in a moment.");
    }
    throw new AppError(
      ErrorCode.alreadyDecided,
      `This request was already ${row.status}.${row.message && row.status === "cancelled" ? ` ${row.message}` : ""}`,
    );
  }

  private async expire(id: string): Promise<void> {
    const entry = this.pending.get(id);
    if (!entry) return;
    const expired = expireApproval(entry.approval, this.now());
    if (expired.status !== "expired") {
      // The timer fired a little early: try again at the deadline.
      if (entry.approval.expiresAt !== null) {
        entry.timer = setTimeout(() => void this.expire(id), Math.max(1, entry.approval.expiresAt - this.now()));
      }
      return;
    }
    this.pending.delete(id);
    this.release(entry);
    await settleApproval(this.deps.db, id, {
      status: "expired",
      decidedById: null,
      decidedAt: new Date(expired.decidedAt),
      finalInput: null,
      message: expired.answer.message,
    }).catch((err: unknown) => this.deps.log.error({ err, approvalId: id }, "recording an expiry failed"));
    entry.answer(expired.answer);
    await insertAuditLog(this.deps.db, {
      actorId: null,
      action: "approval.expire",
      objectType: "approval",
      objectId: id,
      workspaceId: entry.context.workspace.id,
      details: {
        sessionId: entry.approval.sessionId,
        toolName: entry.approval.toolName,
        proposed: entry.approval.input,
        message: expired.answer.message,
      },
    }).catch(() => undefined);
    this.announceSettled(entry, {
      ...entry.view,
      status: "expired",
      decidedAt: new Date(expired.decidedAt).toISOString(),
      message: expired.answer.message,
    });
  }

  private async cancel(id: string, reason: CancelReason): Promise<void> {
    const entry = this.pending.get(id);
    if (!entry) return;
    const now = this.now();
    const cancelled = cancelApproval(entry.approval, reason, now);
    if (cancelled.status !== "cancelled") return;
    this.pending.delete(id);
    this.release(entry);
    await settleApproval(this.deps.db, id, {
      status: "cancelled",
      decidedById: null,
      decidedAt: new Date(now),
      finalInput: null,
      message: cancelled.message,
    }).catch((err: unknown) => this.deps.log.error({ err, approvalId: id }, "recording a cancel failed"));
    // Nobody reads this answer (the request is withdrawn), but the promise must settle.
    entry.answer(denyRequest({ message: cancelled.message }));
    this.announceSettled(entry, {
      ...entry.view,
      status: "cancelled",
      decidedAt: new Date(now).toISOString(),
      message: cancelled.message,
    });
  }

  private release(entry: PendingEntry): void {
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    entry.timer = undefined;
    entry.detachAbort();
  }

  private announceSettled(entry: PendingEntry, view: ApprovalView): void {
    this.settledViews.set(view.id, view);
    if (this.settledViews.size > 1_000) {
      const oldest = this.settledViews.keys().next();
      if (!oldest.done) this.settledViews.delete(oldest.value);
    }
    const resolved: ApprovalResolved = {
      approvalId: view.id,
      sessionId: view.sessionId,
      status: view.status,
      decidedBy: view.decidedBy,
      message: view.message,
      decidedAt: view.decidedAt,
      finalInput: view.finalInput,
      approval: view,
    };
    this.deps.notify(entry.recipients, ApprovalFact.resolved, resolved);
    this.sendCounts(entry.recipients);
  }

  private sendCounts(userIds: readonly string[]): void {
    for (const userId of userIds) this.deps.notify([userId], ApprovalFact.count, this.count(userId));
  }

  /**
   * The review of an Edit/Write/NotebookEdit: the file on disk (inside the workspace only), or the
   * notebook cell, against the proposal.
   */
  private async buildReview(
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
}

/** ExitPlanMode's plan: the input's `plan`, else the plan file it names (inside the workspace). */
async function readPlan(input: JsonObject, rootPath: string): Promise<string | null> {
  if (typeof input.plan === "string" && input.plan.trim() !== "") return input.plan;
  const file = typeof input.planFilePath === "string" ? input.planFilePath : undefined;
  if (!file) return null;
  const located = await locateInWorkspace(rootPath, file);
  if (!located.ok) return null;
  const read = await readReviewFile(located.path);
  return read.ok ? read.text : null;
}

function rowFields(id: string, sessionId: string, requestId: string, request: CanUseToolRequest, now: number) {
  return {
    id,
    sessionId,
    requestId,
    toolName: request.tool_name,
    toolUseId: request.tool_use_id ?? null,
    input: JSON.stringify(request.input),
    suggestions: request.permission_suggestions ? JSON.stringify(request.permission_suggestions) : null,
    decisionReason: request.decision_reason ?? null,
    blockedPath: request.blocked_path ?? null,
    createdAt: new Date(now),
  };
}

function viewOf(
  approval: PendingApproval,
  context: ApprovalContext,
  extra: { review: FileReview | null; plan: string | null },
): ApprovalView {
  return {
    id: approval.id,
    sessionId: approval.sessionId,
    workspace: { id: context.workspace.id, slug: context.workspace.slug, name: context.workspace.name },
    sessionTitle: context.title,
    toolName: approval.toolName,
    input: approval.input,
    reason: approval.decisionReason ?? approval.description,
    blockedPath: approval.blockedPath,
    rememberOptions: rememberOptionsOf(approval.suggestions),
    status: "pending",
    createdAt: new Date(approval.createdAt).toISOString(),
    expiresAt: approval.expiresAt === null ? null : new Date(approval.expiresAt).toISOString(),
    decidedBy: null,
    decidedAt: null,
    message: null,
    finalInput: null,
    review: extra.review,
    plan: extra.plan,
  };
}

/** A view rebuilt from a stored row (a decided approval this sidecar did not settle). */
function viewOfRow(row: ApprovalRow): ApprovalView {
  const input = parseObject(row.input) ?? {};
  const suggestions = (safeJson(row.suggestions ?? "null") as PermissionUpdate[] | null) ?? [];
  return {
    id: row.id,
    sessionId: row.sessionId,
    workspace: row.session.workspace,
    sessionTitle: row.session.title,
    toolName: row.toolName,
    input,
    reason: row.decisionReason,
    blockedPath: row.blockedPath,
    rememberOptions: rememberOptionsOf(suggestions),
    status: row.status as ApprovalStatus,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt?.toISOString() ?? null,
    decidedBy: row.decidedBy,
    decidedAt: row.decidedAt?.toISOString() ?? null,
    message: row.message,
    finalInput: row.finalInput === null ? null : parseObject(row.finalInput),
    review: null,
    plan: row.toolName === "ExitPlanMode" && typeof input.plan === "string" ? input.plan : null,
  };
}

function rememberOptionsOf(suggestions: readonly PermissionUpdate[]): RememberOption[] {
  return suggestions.map((s, index) => ({
    index,
    label: describeSuggestion(s),
    workspaceScope: workspaceRulesFromSuggestion(s).length > 0,
  }));
}

function describeSuggestion(s: PermissionUpdate): string {
  switch (s.type) {
    case "setMode":
      return `Switch this session to ${s.mode}`;
    case "addDirectories":
      return `Allow access to ${s.directories.join(", ")}`;
    case "removeDirectories":
      return `Remove access to ${s.directories.join(", ")}`;
    default: {
      const rules = s.rules.map(ruleLabel).join(", ");
      const verb = s.behavior === "allow" ? "Always allow" : s.behavior === "deny" ? "Always deny" : "Always ask for";
      return `${verb} ${rules}`;
    }
  }
}

function cancelReasonOf(reason: unknown): CancelReason {
  return reason instanceof Error && reason.name === "ControlCancelledError"
    ? CancelReason.interrupted
    : CancelReason.processExited;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function parseObject(text: string): Record<string, unknown> | null {
  const value = safeJson(text);
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
