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
  countPendingApprovalsFor,
  findApproval,
  findApprovalContext,
  findStreamedPlan,
  findRoleForSession,
  insertApproval,
  insertAuditLog,
  listRecentApprovals,
  settleApproval,
  type ApprovalContext,
  type ApprovalRow,
} from "@/server/db/approvals";
import { allowRequest, denyRequest, matchesWorkspaceRule, ruleLabel } from "@/server/domain/approval/answers";
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
  type PendingApproval,
} from "@/server/domain/approval/approval-state";
import { answerFor } from "@/server/domain/approval/decision-answer";
import { isReviewableFileTool } from "@/server/domain/approval/file-edit-review";
import { parseRole } from "@/server/domain/workspace/roles";
import type { CanUseToolRequest } from "@/server/shared/claude-protocol/messages";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import {
  ApprovalFact,
  type ApprovalCount,
  type ApprovalList,
  type ApprovalView,
  type Decision,
  type FileReview,
} from "@/server/shared/wire/approval";
import { CommandMemo } from "@/server/sidecar/session/command-memo";
import type { DecidedPermission, PermissionQuestion } from "@/server/sidecar/session/session-runner-contract";
import { workspaceFilesScope } from "@/server/sidecar/session/workspace-files-scope";
import { buildReview, readPlan, type PlanShown, type ReviewScope } from "./approval-review";
import { resolvedFactOf, rowFields, viewOf, viewOfRow } from "./approval-views";

/** Sends a fact to every socket of each user. */
export type NotifyUsers = (userIds: readonly string[], event: string, payload: unknown) => void;

export interface ApprovalServiceDeps {
  db: Db;
  log: Logger;
  notify: NotifyUsers;
  now?: () => number;
  /**
   * Several sidecars: a person's list shows the pending questions other sidecars hold too (decided
   * there by forwarding), and their count is read from the database (every node's questions).
   */
  listOthersPending?: boolean;
  /** The steps of a question on its way to the deciders (the latency trace; bench/browser-turn). */
  mark?: (stage: "approval-context-read" | "approval-row-written" | "approval-review-read", fields: { sessionId: string; approvalId?: string }) => void;
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
  answer: (decision: DecidedPermission) => void;
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
  private readonly commands = new CommandMemo<Promise<ApprovalView>>(maxRememberedCommands);
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
    session: { sessionId: string; workspaceId: string; rootPath: string; configDir?: string },
    question: PermissionQuestion,
  ): Promise<DecidedPermission> => {
    const { request, requestId, signal } = question;
    const id = randomUUID();
    // What the card shows needs only the workspace's root: the file is read while the context is
    // read and the row written, not after them (the deciders are told after all three).
    const shown = this.readShown(question, { id: session.workspaceId, rootPath: session.rootPath }, session.configDir ?? null, id);
    const context = await this.contextOf(session.sessionId);
    this.deps.mark?.("approval-context-read", { sessionId: session.sessionId });
    if (!context) return denyRequest({ message: "Conduit could not find this session; nothing was allowed." });
    const now = this.now();

    const rule = context.rules.find((r) => matchesWorkspaceRule(r, request));
    if (rule) {
      const decision = allowRequest(request);
      await insertApproval(this.deps.db, {
        ...rowFields(randomUUID(), session.sessionId, requestId, request, now, question.agent),
        status: "allowed",
        expiresAt: null,
        decidedAt: new Date(now),
        finalInput: null,
        message: `Allowed by the workspace rule ${ruleLabel(rule)}.`,
      }).catch((err: unknown) => this.deps.log.warn({ err }, "recording a rule-allowed approval failed"));
      return decision;
    }

    const agentDescription = question.agent?.description ?? null;
    const approval = createApproval({
      id,
      sessionId: session.sessionId,
      requestId,
      request,
      sessionStarterId: context.createdById,
      deadlineSeconds: context.workspace.approvalDeadlineSec,
      now,
    });
    // Persist, then tell: a reload right after the fact must find the row.
    await insertApproval(this.deps.db, {
      ...rowFields(id, session.sessionId, requestId, request, now, question.agent),
      status: "pending",
      expiresAt: approval.expiresAt === null ? null : new Date(approval.expiresAt),
    });
    this.deps.mark?.("approval-row-written", { sessionId: session.sessionId, approvalId: id });
    const recipients = routeApproval({
      sessionStarterId: context.createdById,
      members: context.members.flatMap((m) => {
        const role = parseRole(m.role);
        return role ? [{ userId: m.userId, role }] : [];
      }),
    });

    return new Promise<DecidedPermission>((resolve) => {
      const entry: PendingEntry = {
        approval,
        request,
        context,
        recipients,
        view: viewOf(approval, context, { review: null, plan: null, agentDescription }),
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
    question: PermissionQuestion,
    workspace: { id: string; rootPath: string },
    configDir: string | null,
    approvalId: string,
  ): Promise<{ review: FileReview | null; disk: string | null; plan: PlanShown | null }> {
    const { request } = question;
    let review: FileReview | null = null;
    let disk: string | null = null;
    let plan: PlanShown | null = null;
    try {
      const scope = await this.reviewScopeOf(request, workspace);
      ({ review, disk } = await buildReview(request, scope));
      if (request.tool_name === "ExitPlanMode") {
        plan = await readPlan(request.input, { workspace: scope, configDir, streamedPlan: question.streamedPlan });
      }
    } catch (err) {
      this.deps.log.error({ err, approvalId }, "building an approval's review failed");
      if (request.tool_name === "ExitPlanMode") plan = { text: null, note: "Conduit could not read the plan." };
    }
    return { review, disk, plan };
  }

  /**
   * The workspace's files door for the card's reads: `null` when its directory is missing (the
   * review says so). Asked only for a request that reads a file.
   */
  private async reviewScopeOf(request: CanUseToolRequest, workspace: { id: string; rootPath: string }): Promise<ReviewScope> {
    if (!isReviewableFileTool(request.tool_name) && request.tool_name !== "ExitPlanMode") return null;
    try {
      return await workspaceFilesScope(this.deps.db, workspace);
    } catch (err) {
      if (err instanceof AppError && err.code === ErrorCode.notFound) return null;
      throw err;
    }
  }

  /** Tells the deciders, once what the card shows is read. */
  private async show(entry: PendingEntry, shown: ReturnType<ApprovalService["readShown"]>): Promise<void> {
    const { context, approval } = entry;
    const { review, disk, plan } = await shown;
    this.deps.mark?.("approval-review-read", { sessionId: entry.approval.sessionId, approvalId: approval.id });
    // Settled meanwhile (expired, cancelled): its resolution already went out.
    if (this.pending.get(approval.id) !== entry) return;
    entry.view = viewOf(approval, context, {
      review,
      plan: plan?.text ?? null,
      planNote: plan?.note ?? null,
      agentDescription: entry.view.subagent?.description ?? null,
    });
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
      if (row.status === "pending") {
        if (this.deps.listOthersPending) pending.push(await this.viewOfStoredRow(row));
        continue;
      }
      decided.push(this.settledViews.get(row.id) ?? (await this.viewOfStoredRow(row)));
    }
    return { approvals: [...pending, ...decided], now: new Date(this.now()).toISOString() };
  }

  /**
   * A stored row's view. ExitPlanMode whose request carried no plan: the plan the model put in that
   * very call, from the session's log (by tool_use id), or the row's note that there is none.
   */
  private async viewOfStoredRow(row: ApprovalRow): Promise<ApprovalView> {
    const view = viewOfRow(row);
    if (row.toolName !== "ExitPlanMode" || view.plan !== null || row.toolUseId === null) return view;
    const plan = await findStreamedPlan(this.deps.db, row.sessionId, row.toolUseId).catch(() => null);
    if (plan === null) return view;
    return {
      ...view,
      plan,
      planNote: "Claude Code kept no plan file for this request; this is the plan the model wrote in its call to leave plan mode.",
    };
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

  /** True while this sidecar's CLI waits for the approval's answer (a cluster routes decisions by it). */
  holds(approvalId: string): boolean {
    return this.pending.has(approvalId);
  }

  /** Questions of this sidecar waiting for an answer (metrics). */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** The user's count as the inbox shows it: this sidecar's, or in a cluster every sidecar's (the database's). */
  async countFor(userId: string): Promise<ApprovalCount> {
    if (!this.deps.listOthersPending) return this.count(userId);
    return { pending: await countPendingApprovalsFor(this.deps.db, userId) };
  }

  /** The number of pending approvals routed to the user. */
  count(userId: string): ApprovalCount {
    let pending = 0;
    for (const entry of this.pending.values()) if (entry.shown && entry.recipients.includes(userId)) pending++;
    return { pending };
  }

  /** A person's decision; a retry with the same `commandId` gets the first outcome. */
  decide(user: Decider, approvalId: string, decision: Decision, commandId: string): Promise<ApprovalView> {
    return this.commands.once(`${user.id}\u0000${commandId}`, () => this.runDecide(user, approvalId, decision));
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
    const { answer, review, workspaceRules } = answerFor({ request: entry.request, review: entry.view.review, disk: entry.disk }, decision);
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
    entry.answer({ ...decided.answer, decidedBy: { id: user.id, name: user.name } });
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
    this.deps.notify(entry.recipients, ApprovalFact.resolved, resolvedFactOf(view));
    this.sendCounts(entry.recipients);
  }

  private sendCounts(userIds: readonly string[]): void {
    if (this.deps.listOthersPending) {
      for (const userId of userIds) {
        void this.countFor(userId).then(
          (count) => this.deps.notify([userId], ApprovalFact.count, count),
          (err: unknown) => this.deps.log.warn({ err, userId }, "counting a user's pending approvals failed"),
        );
      }
      return;
    }
    for (const userId of userIds) this.deps.notify([userId], ApprovalFact.count, this.count(userId));
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
