/**
 * Session management beside the live session (issue 13 item 4): rename (`rename_session` to a
 * live CLI, stored on the row), stop a background task (`stop_task`), archive and unarchive,
 * delete. Every change a person makes is audited. The socket layer has checked the role already
 * (editors and owners steer, only owners delete); this module trusts the actor it is given.
 *
 * Deleting keeps the Session row (marked `deletedAt`) because CostEntry rows hang off it with a
 * cascade and the reports must keep counting them; the conversation itself (events, approvals,
 * search text) is removed, its git worktree too if it has one, and the row is invisible to every
 * read (`deletedAt: null` filters).
 */
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { ArchiveResult, RenameResult, SessionRemoved } from "@/server/shared/wire/session-manage";
import type { Actor, SessionHub } from "./session-hub";
import { releaseSessionWorktree } from "./session-worktree-start";

export interface SessionManagementDeps {
  hub: SessionHub;
  db: Db;
  log: Logger;
  now?: () => Date;
}

export class SessionManagement {
  constructor(private readonly deps: SessionManagementDeps) {}

  /** Renames the session: the live CLI hears it (its own title), the row keeps it either way. */
  async rename(actor: Actor, sessionId: string, title: string): Promise<RenameResult> {
    const { db, hub, log } = this.deps;
    const before = await this.row(sessionId);
    let live = false;
    try {
      live = (await hub.control(sessionId, { subtype: "rename_session", title })) !== undefined;
    } catch (err) {
      // The CLI's own title is a nicety; the stored title is what Conduit shows.
      log.warn({ err, sessionId }, "rename_session was refused by the CLI; the title is stored anyway");
    }
    await db.session.update({ where: { id: sessionId }, data: { title } });
    await hub.retitle(sessionId, title);
    await this.audit(actor, before.workspaceId, sessionId, "session.rename", { from: before.title, to: title, live });
    return { title, live };
  }

  /** Stops one of the live CLI's background tasks (a background shell or subagent). */
  async stopTask(actor: Actor, sessionId: string, taskId: string): Promise<{ stopped: true }> {
    const before = await this.row(sessionId);
    let answer: Record<string, unknown> | undefined;
    try {
      answer = await this.deps.hub.control(sessionId, { subtype: "stop_task", task_id: taskId });
    } catch (err) {
      throw new AppError(
        ErrorCode.conflict,
        `The CLI could not stop task ${taskId}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (answer === undefined) {
      throw new AppError(
        ErrorCode.conflict,
        "The session's CLI is not running, so it has no background tasks left to stop.",
      );
    }
    await this.audit(actor, before.workspaceId, sessionId, "session.stop-task", { taskId });
    return { stopped: true };
  }

  /** Archives (or brings back) the session: archived sessions leave the default list. */
  async archive(actor: Actor, sessionId: string, archived: boolean): Promise<ArchiveResult> {
    const before = await this.row(sessionId);
    await this.deps.db.session.update({
      where: { id: sessionId },
      data: { archivedAt: archived ? (before.archivedAt ?? this.now()) : null },
    });
    if ((before.archivedAt !== null) !== archived)
      await this.audit(actor, before.workspaceId, sessionId, archived ? "session.archive" : "session.unarchive", {});
    return { archived };
  }

  /**
   * Deletes the session: marked deleted first (nothing loads it again), its process stopped,
   * then its events and approvals removed. Cost entries stay for the reports.
   */
  async remove(actor: Actor, sessionId: string, confirm: string): Promise<SessionRemoved> {
    if (confirm !== sessionId) {
      throw new AppError(ErrorCode.invalidPayload, "The confirmation does not name this session; nothing was deleted.");
    }
    const { db, hub } = this.deps;
    const before = await this.row(sessionId);
    const marked = await db.session.updateMany({
      where: { id: sessionId, deletedAt: null },
      data: { deletedAt: this.now(), deletedById: actor.id },
    });
    if (marked.count === 0) throw new AppError(ErrorCode.notFound, "No such session.");
    await hub.forget(sessionId);
    // a session in its own git worktree takes it (and its branch) along
    let worktree = "none";
    try {
      const before = await db.session.findUnique({
        where: { id: sessionId },
        select: { worktreePath: true, worktreeClosedAt: true },
      });
      if (before?.worktreePath && !before.worktreeClosedAt) {
        await releaseSessionWorktree(db, sessionId);
        worktree = "removed";
      }
    } catch (err) {
      worktree = "kept";
      this.deps.log.warn({ err, sessionId }, "the deleted session's worktree could not be removed");
    }
    const [events, approvals] = await db.$transaction([
      db.sessionEvent.deleteMany({ where: { sessionId } }),
      db.approval.deleteMany({ where: { sessionId } }),
      db.session.update({ where: { id: sessionId }, data: { searchText: null, pid: null, status: "stopped" } }),
    ]);
    await this.audit(actor, before.workspaceId, sessionId, "session.delete", {
      title: before.title,
      events: events.count,
      approvals: approvals.count,
      worktree,
    });
    return { sessionId, workspaceId: before.workspaceId };
  }

  private async row(sessionId: string) {
    const row = await this.deps.db.session.findFirst({
      where: { id: sessionId, deletedAt: null },
      select: { workspaceId: true, title: true, archivedAt: true },
    });
    if (!row) throw new AppError(ErrorCode.notFound, "No such session, or you are not a member of its workspace.");
    return row;
  }

  private async audit(
    actor: Actor,
    workspaceId: string,
    sessionId: string,
    action: string,
    details: Record<string, unknown>,
  ): Promise<void> {
    await this.deps.db.auditLog.create({
      data: {
        actorId: actor.id,
        action,
        objectType: "session",
        objectId: sessionId,
        workspaceId,
        details: JSON.stringify(details),
      },
    });
  }

  private now(): Date {
    return this.deps.now?.() ?? new Date();
  }
}
