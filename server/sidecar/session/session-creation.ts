/**
 * Creating a session: the argv checked before a row exists, the Session row and (when asked) its
 * git worktree, the `created` event, and the first CLI child. Retried with the same `commandId`
 * by the same person, it answers with the session the first call made (in memory, else found in
 * recent sessions' logs).
 *
 * Owns: the create memo and `createRetryWindowMs`. Must not: check who may create (the socket
 * layer authorizes the workspace), or keep a session's entry anywhere but the registry.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "@/server/db/client";
import { findSessionCreatedBy, insertSession, type WorkspaceAccess } from "@/server/db/sessions";
import { buildCliArgs } from "@/server/sidecar/process/build-cli-args";
import type { SessionView } from "@/server/shared/wire/session";
import { CommandMemo } from "./command-memo";
import { asAppError, bypassRefused, maxRememberedCommands, newEntry, shuttingDown, viewOf } from "./session-entry";
import type { SessionEventLog } from "./session-event-log";
import type { Actor, NewSessionInput } from "./session-hub-types";
import type { SessionLifecycle } from "./session-lifecycle";
import type { SessionRegistry } from "./session-registry";
import type { SessionRowWriter } from "./session-row-writer";
import type { SessionSubscriptions } from "./session-subscriptions";
import { attachSessionWorktree } from "./session-worktree-start";

/** How far back a retried `session:create` is looked for. */
const createRetryWindowMs = 24 * 60 * 60 * 1000;

export interface SessionCreationDeps {
  db: Db;
  sidecarId: string | null;
  registry: SessionRegistry;
  events: SessionEventLog;
  subscriptions: SessionSubscriptions;
  rows: SessionRowWriter;
  lifecycle: SessionLifecycle;
  isClosed: () => boolean;
}

export class SessionCreation {
  private readonly creates = new CommandMemo<Promise<SessionView>>(maxRememberedCommands);

  constructor(private readonly deps: SessionCreationDeps) {}

  /**
   * Creates a session in `access.workspace` and starts its CLI child. Retried with the same
   * `commandId` by the same person, it returns the session the first call created.
   */
  createSession(actor: Actor, access: WorkspaceAccess, input: NewSessionInput): Promise<SessionView> {
    if (this.deps.isClosed()) return Promise.reject(shuttingDown());
    if (input.mode === "bypassPermissions" && !access.workspace.allowBypass) return Promise.reject(bypassRefused());
    return this.creates.once(`${actor.id}\u0000${input.commandId}`, async () => {
      const prior = await this.findCreated(access.workspace.id, actor.id, input.commandId);
      if (prior) return viewOf(await this.deps.registry.entry(prior));
      // The argv the child will get, checked before a row exists: a bad model name is the
      // caller's error, not a session that can never start.
      buildCliArgs({
        claudeSessionId: randomUUID(),
        resume: false,
        permissionMode: input.mode,
        model: input.model,
        allowBypass: access.workspace.allowBypass,
        maxBudgetUsd: input.maxBudgetUsd,
      });
      return this.startNewSession(actor, access, input);
    });
  }

  private async startNewSession(
    actor: Actor,
    access: WorkspaceAccess,
    input: NewSessionInput,
  ): Promise<SessionView> {
    const { events, subscriptions, rows } = this.deps;
    const row = await insertSession(this.deps.db, {
      workspaceId: access.workspace.id,
      createdById: actor.id,
      claudeSessionId: randomUUID(),
      mode: input.mode,
      model: input.model ?? null,
      sidecarId: this.deps.sidecarId,
      maxBudgetUsd: input.maxBudgetUsd ?? null,
    });
    // the worktree exists before the first spawn: the child's cwd is in it from the start
    if (input.worktree) row.worktreePath = await attachSessionWorktree(this.deps.db, row.id, access.workspace.rootPath);
    const entry = newEntry(row, access.workspace, {
      fresh: true,
      lastSeq: 0,
      costUsd: 0,
      conversationStarted: false,
    });
    this.deps.registry.add(entry);
    events.rememberName(actor.id, actor.name);
    const created = await events.append(
      entry,
      "process",
      { phase: "created", mode: input.mode, model: input.model ?? null },
      { commandId: input.commandId, actor },
    );
    subscriptions.emitStatus(entry);
    try {
      await this.deps.lifecycle.ensureRunner(entry, false);
    } catch (err) {
      await events.noteFailure(entry, "create", created.record.seq, err);
      entry.status = "stopped";
      rows.persistRow(entry);
      subscriptions.emitStatus(entry);
      throw asAppError(err);
    }
    return viewOf(entry);
  }

  /** The session a `session:create` with this id made, looked up in recent sessions' logs. */
  private findCreated(workspaceId: string, userId: string, commandId: string): Promise<string | undefined> {
    return findSessionCreatedBy(this.deps.db, { workspaceId, userId, commandId, since: new Date(Date.now() - createRetryWindowMs) });
  }
}
