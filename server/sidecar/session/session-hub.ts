/**
 * The sidecar's registry of sessions: one entry per session touched since start, holding its
 * live runner (if any), its figures, its in-flight commands, and the subscribers catching up.
 * Every runner event and every user command goes through the event writer (persist first);
 * listeners (the socket layer) hear of an event only once it is committed.
 *
 * Authorization is the caller's job (the socket layer asks the database who is a member); the
 * hub trusts the actor it is given.
 */
import { settingsStillTrusted } from "@/server/workspace-settings/read-workspace-settings";
import { networkPolicyOf } from "@/server/domain/workspace/network-policy";
import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import {
  findSessionCommand,
  findSessionEvent,
  listResultCandidates,
  listSessionEventPage,
  sessionEventSize,
  type EventPageLimits,
  type SessionEventRecord,
} from "@/server/db/session-events";
import {
  findSession,
  findUserNames,
  insertSession,
  listRecentSessionIds,
  sumSessionCost,
  type WorkspaceAccess,
} from "@/server/db/sessions";
import { isLive, type SessionState } from "@/server/domain/session/session-state";
import { checkMonthlyBudgets, listRecordedResultIds } from "@/server/db/cost-entries";
import { assertWithinBudget } from "@/server/domain/cost/budget";
import { createCostState } from "@/server/domain/cost/cost-reducer";
import { buildCliArgs } from "@/server/sidecar/process/build-cli-args";
import { ZPermissionMode } from "@/server/shared/claude-protocol/encode";
import type { CliMessage, PermissionMode } from "@/server/shared/claude-protocol/messages";
import { AppError, ErrorCode, toWireError, type WireError } from "@/server/shared/errors/app-error";
import {
  maxFetchEventChars,
  subscribePage,
  type CommandAccepted,
  type PermissionModeChoice,
  type SessionStatus,
  type SessionView,
  type SetModelResult,
  type SetModeResult,
  type SubscribeResult,
  type WireEvent,
  type WireEventKind,
} from "@/server/shared/wire/session";
import { eventLogStoreOf, SessionEventWriter, type StoredEvent } from "./session-event-writer";
import { storePromptImages } from "./prompt-images";
import { CommandMemo, rememberBounded } from "./command-memo";
import {
  asAppError,
  assertNotDead,
  bypassRefused,
  liveStatuses,
  maxRememberedCommands,
  newEntry,
  reusedCommandId,
  safeParse,
  shuttingDown,
  snapshotSessionOf,
  viewOf,
  type SessionEntry,
} from "./session-entry";
import { SessionRowWriter } from "./session-row-writer";
import { SessionHistoryIndexer } from "./session-history-indexer";
import { countResult, isResult, SessionCostRecorder } from "./session-cost-recorder";
import type { PromptImage } from "@/server/shared/wire/session-controls";
import type { HostControlRequest, PermissionDecision } from "@/server/shared/claude-protocol/encode";
import type {
  PermissionDecider,
  PermissionQuestion,
  RunnerEvent,
  SessionRunner,
  SessionRunnerOptions,
} from "./session-runner-contract";
import { toWireEvent } from "./session-wire-event";
import { attachSessionWorktree } from "./session-worktree-start";
import type { SnapshotSession, TurnSnapshots } from "./turn-snapshots";

/**
 * Makes the runner of one session; the hub starts, drives and disposes it. `decidePermission`
 * is the hub's: it logs every decision before the runner writes it to the CLI.
 */
/** What `createSession` needs besides who asks and where. */
export interface NewSessionInput {
  mode: PermissionModeChoice;
  model?: string | undefined;
  maxBudgetUsd?: number | undefined;
  /** Start in a git worktree of its own (server/workspace-git/session-worktree.ts). */
  worktree?: boolean | undefined;
  commandId: string;
}

export type CreateRunner = (options: SessionRunnerOptions, decidePermission: PermissionDecider) => SessionRunner;

/** Decides a permission question of a session (the approval queue, once there is one). */
export type SessionPermissionDecider = (
  session: { sessionId: string; workspaceId: string },
  question: PermissionQuestion,
) => Promise<PermissionDecision>;

/** The person a command comes from. */
export interface Actor {
  id: string;
  name: string;
}

export interface SessionHubDeps {
  db: Db;
  createRunner: CreateRunner;
  /** `<CONDUIT_DATA_DIR>/claude-config`: each workspace's CLAUDE_CONFIG_DIR is a directory in it. */
  configRoot: string;
  /** Recorded on the Session rows this sidecar owns. */
  sidecarId?: string | null;
  log: Logger;
  /** Defaults to a writer on `db`. */
  writer?: SessionEventWriter;
  /** Passed to every runner. */
  includePartialMessages?: boolean;
  /**
   * Answers the CLI's `can_use_tool` questions. Without one, every question is denied with a
   * message saying why (the CLI would otherwise wait forever); permission modes that need no
   * approval (acceptEdits for edits, bypassPermissions) still let work proceed.
   */
  decidePermission?: SessionPermissionDecider;
  /** The clock for budgets and cost entries; defaults to `Date.now`. */
  now?: () => number;
  /** Page size of `subscribe`; defaults to the wire contract's `subscribePage`. */
  subscribePage?: EventPageLimits;
  /** Snapshots the workspace around each turn (the Changes view); none: changes are not recorded. */
  turnSnapshots?: TurnSnapshots;
}

/** What `subscribe` hands to its `deliver` callback. */
export type SubscribeSnapshot = Omit<SubscribeResult, "viewers">;

/** How far back a retried `session:create` is looked for. */
const createRetryWindowMs = 24 * 60 * 60 * 1000;

/** Registry of live sessions, event persistence and fan-out. */
export class SessionHub {
  private readonly entries = new Map<string, SessionEntry>();
  private readonly loading = new Map<string, Promise<SessionEntry>>();
  private readonly creates = new CommandMemo<Promise<SessionView>>(maxRememberedCommands);
  private readonly names = new Map<string, string>();
  private readonly eventListeners = new Set<(event: WireEvent) => void>();
  private readonly statusListeners = new Set<(view: SessionView) => void>();
  private readonly writer: SessionEventWriter;
  private readonly ownsWriter: boolean;
  private readonly detachWriter: () => void;
  private closed = false;
  private readonly rows: SessionRowWriter;
  private readonly history: SessionHistoryIndexer;
  private readonly costs: SessionCostRecorder;

  constructor(private readonly deps: SessionHubDeps) {
    this.ownsWriter = deps.writer === undefined;
    this.writer = deps.writer ?? new SessionEventWriter(eventLogStoreOf(deps.db), deps.log);
    this.detachWriter = this.writer.onDidStore((stored) => this.onStored(stored));
    this.rows = new SessionRowWriter({ db: deps.db, log: deps.log, sidecarId: deps.sidecarId ?? null });
    this.history = new SessionHistoryIndexer({ db: deps.db, log: deps.log });
    this.costs = new SessionCostRecorder({ db: deps.db, log: deps.log, now: () => this.now(), emitStatus: (entry) => this.emitStatus(entry) });
  }

  /** Called with every event once it is in the log, in `seq` order per session. */
  onDidEmitEvent(listener: (event: WireEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Called when a session's status, mode, model, title or figures change. */
  onDidChangeStatus(listener: (view: SessionView) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /**
   * Creates a session in `access.workspace` and starts its CLI child. Retried with the same
   * `commandId` by the same person, it returns the session the first call created.
   */
  createSession(
    actor: Actor,
    access: WorkspaceAccess,
    input: NewSessionInput,
  ): Promise<SessionView> {
    if (this.closed) return Promise.reject(shuttingDown());
    if (input.mode === "bypassPermissions" && !access.workspace.allowBypass) return Promise.reject(bypassRefused());
    return this.creates.once(`${actor.id}\u0000${input.commandId}`, async () => {
      const prior = await this.findCreated(access.workspace.id, actor.id, input.commandId);
      if (prior) return this.view(prior);
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

  /**
   * Reads one page of the log after `afterSeq` (or from the start, flagged `reset`, when the
   * client is ahead) and hands it to `deliver`. A page that is not the last (`hasMore`) is only
   * a page: the caller stays out of the session's room and asks for the next one. The last page
   * is the catch-up: `deliver` must join the room synchronously; events stored while the page
   * was read are merged in, events stored later reach the room, none twice.
   */
  async subscribe(sessionId: string, afterSeq: number, deliver: (snapshot: SubscribeSnapshot) => void): Promise<void> {
    const entry = await this.entry(sessionId);
    const captured: WireEvent[] = [];
    entry.captures.add(captured);
    try {
      const reset = afterSeq > entry.lastNotifiedSeq;
      const from = reset ? 0 : afterSeq;
      const page = await listSessionEventPage(this.deps.db, sessionId, from, this.deps.subscribePage ?? subscribePage);
      await this.learnNames(page.rows);
      // From here to deliver() nothing awaits. Every event up to lastNotifiedSeq was either
      // committed before the read (in the page, or in a later page when `more`) or announced
      // after the capture began (in `captured`); later ones go to the room deliver() joins.
      // Rows past lastNotifiedSeq are committed but not yet announced: they will reach the
      // room, so they are left out here.
      const upTo = entry.lastNotifiedSeq;
      const events: WireEvent[] = [];
      for (const row of page.rows) {
        if (row.seq > upTo) break;
        events.push(toWireEvent(row, { userName: this.nameOf(row.userId) }));
      }
      let last = events.at(-1)?.seq ?? from;
      // More rows follow this page in the log: the client reads them before it joins, and
      // whatever was captured meanwhile is in those rows.
      const hasMore = page.more && last < upTo;
      if (!hasMore) {
        for (const event of captured) {
          if (event.seq > last) {
            events.push(event);
            last = event.seq;
          }
        }
      }
      deliver({ session: viewOf(entry), events, reset, hasMore, nextAfterSeq: last });
    } finally {
      entry.captures.delete(captured);
    }
  }

  /** One event with its whole payload, up to `maxFetchEventChars` (the download has the rest). */
  async fetchEvent(sessionId: string, seq: number): Promise<WireEvent> {
    const size = await sessionEventSize(this.deps.db, sessionId, seq);
    if (size === undefined) throw new AppError(ErrorCode.notFound, `This session has no event ${seq}.`);
    if (size > maxFetchEventChars) {
      throw new AppError(
        ErrorCode.invalidPayload,
        `Event ${seq} is too large to show whole here (${(size / 1024 / 1024).toFixed(1)} M characters; at most ${maxFetchEventChars / 1024 / 1024} M). Download the session's log from the raw tab to read it.`,
      );
    }
    const row = await findSessionEvent(this.deps.db, sessionId, seq);
    if (!row) throw new AppError(ErrorCode.notFound, `This session has no event ${seq}.`);
    await this.learnNames([row]);
    return toWireEvent(row, { whole: true, userName: this.nameOf(row.userId) });
  }

  /** The current view of a session. */
  async view(sessionId: string): Promise<SessionView> {
    return viewOf(await this.entry(sessionId));
  }

  /** Views of the sessions of a workspace this hub holds in memory. */
  liveViews(workspaceId: string): SessionView[] {
    return [...this.entries.values()].filter((e) => e.workspace.id === workspaceId).map((e) => viewOf(e));
  }

  /**
   * Writes a prompt; starts (resuming the conversation) a child when none is live. Its images
   * are stored first (PromptImage rows) and named in the prompt event by id.
   */
  prompt(
    actor: Actor,
    sessionId: string,
    text: string,
    commandId: string,
    images: readonly PromptImage[] = [],
  ): Promise<CommandAccepted> {
    return this.command(sessionId, commandId, "prompt", async (entry) => {
      assertNotDead(entry);
      // Checked before the prompt is logged: a refused prompt starts no turn. A turn already
      // running is not affected; its cost counts when it ends.
      assertWithinBudget(
        await checkMonthlyBudgets(
          this.deps.db,
          { userId: actor.id, workspaceId: entry.workspace.id },
          new Date(this.now()),
        ),
      );
      const uuid = randomUUID();
      rememberBounded(entry.promptSenders, uuid, actor.id, maxRememberedCommands);
      const refs = await storePromptImages(this.deps.db, entry.id, images);
      const stored = await this.append(
        entry,
        "prompt",
        refs.length > 0 ? { text, uuid, images: refs } : { text, uuid },
        { commandId, actor },
      );
      this.history.indexText(entry, text);
      try {
        // the before-turn snapshot runs while a child starts; it never throws
        const snapshotted = this.deps.turnSnapshots?.promptDelivered(snapshotSessionOf(entry), stored.record.seq);
        const runner = await this.ensureRunner(entry, entry.conversationStarted);
        await snapshotted?.();
        await runner.prompt(images.length > 0 ? { uuid, text, images } : { uuid, text });
      } catch (err) {
        this.endTurnSnapshot(entry);
        await this.noteFailure(entry, "prompt", stored.record.seq, err);
        throw err;
      }
      return { seq: stored.record.seq };
    });
  }

  /** Interrupts the running turn (a no-op in the log's eyes when no child is live). */
  interrupt(actor: Actor, sessionId: string, commandId: string): Promise<CommandAccepted> {
    return this.command(sessionId, commandId, "interrupt", async (entry) => {
      const stored = await this.append(entry, "interrupt", {}, { commandId, actor });
      const runner = entry.runner;
      if (runner && isLive(runner.state)) {
        try {
          await runner.interrupt();
        } catch (err) {
          await this.noteFailure(entry, "interrupt", stored.record.seq, err);
          throw asAppError(err);
        }
      }
      return { seq: stored.record.seq };
    });
  }

  /** Stops the child politely; the next prompt resumes the conversation. */
  stop(actor: Actor, sessionId: string, commandId: string): Promise<CommandAccepted> {
    return this.command(sessionId, commandId, "stop", async (entry) => {
      const stored = await this.append(entry, "stop", {}, { commandId, actor });
      const runner = entry.runner ?? (await entry.runnerStarting?.catch(() => undefined));
      if (runner) {
        try {
          await runner.stop();
        } catch (err) {
          await this.noteFailure(entry, "stop", stored.record.seq, err);
          throw asAppError(err);
        }
      }
      return { seq: stored.record.seq };
    });
  }

  /**
   * Switches the permission mode. With a live child, the answer is the mode the CLI confirmed;
   * with none, the mode is kept for the next child. `allowBypass` is the workspace's current setting.
   */
  setMode(
    actor: Actor,
    sessionId: string,
    mode: PermissionModeChoice,
    commandId: string,
    allowBypass: boolean,
  ): Promise<SetModeResult> {
    if (mode === "bypassPermissions" && !allowBypass) return Promise.reject(bypassRefused());
    return this.command(sessionId, commandId, "set-mode", async (entry) => {
      entry.workspace = { ...entry.workspace, allowBypass };
      if (mode === "bypassPermissions" && entry.runner && !entry.runnerAllowsBypass) {
        // The flag is fixed at spawn: only a new runner (and child) can offer bypass.
        if (isLive(entry.runner.state)) {
          throw new AppError(
            ErrorCode.conflict,
            "This session's CLI was started before bypassPermissions was allowed. Press \"Stop process\" in the session header; the next prompt restarts it with bypass available.",
          );
        }
        await this.retireRunner(entry);
      }
      const confirmed = await this.changeLive(entry, "set-mode", mode, commandId, actor, (runner) =>
        runner.setPermissionMode(mode as PermissionMode),
      );
      entry.mode = confirmed.value;
      this.rows.persistRow(entry);
      this.emitStatus(entry);
      return { seq: confirmed.seq, mode: confirmed.value };
    });
  }

  /** Switches the model, as {@link setMode} does the mode. */
  setModel(actor: Actor, sessionId: string, model: string, commandId: string): Promise<SetModelResult> {
    return this.command(sessionId, commandId, "set-model", async (entry) => {
      const confirmed = await this.changeLive(entry, "set-model", model, commandId, actor, (runner) =>
        runner.setModel(model),
      );
      entry.model = confirmed.value;
      this.rows.persistRow(entry);
      this.emitStatus(entry);
      return { seq: confirmed.seq, model: confirmed.value };
    });
  }

  /**
   * Runs a take-back of the session's file changes (`run` gets the session's status and refuses
   * while a turn runs) once per `commandId`, and logs it as a `kind` event of the conversation.
   */
  takeBack<R extends object>(
    actor: Actor,
    sessionId: string,
    commandId: string,
    kind: "rewind" | "revert",
    run: (session: SnapshotSession, status: SessionStatus) => Promise<{ event: unknown; result: R }>,
  ): Promise<R & { seq: number }> {
    return this.command(sessionId, commandId, kind, async (entry) => {
      const { event, result } = await run(snapshotSessionOf(entry), entry.runner?.state.status ?? entry.status);
      const stored = await this.append(entry, kind, event, { commandId, actor });
      return { ...result, seq: stored.record.seq };
    });
  }

  /** The session's runner when its CLI child is live (control requests need one). */
  async liveRunner(sessionId: string): Promise<SessionRunner | undefined> {
    const entry = await this.entry(sessionId);
    const runner = entry.runner;
    return runner && isLive(runner.state) && runner.state.processRunning ? runner : undefined;
  }

  /** Any live runner of this sidecar (for what every CLI answers alike, such as the model list). */
  someLiveRunner(): SessionRunner | undefined {
    for (const entry of this.entries.values()) {
      const runner = entry.runner;
      if (runner && isLive(runner.state) && runner.state.processRunning) return runner;
    }
    return undefined;
  }

  /**
   * A session command of another module (`session-controls.ts`): idempotent by `commandId` like
   * the hub's own, logged as one `kind` event with the record `run` returns, or with the error
   * when it throws. `run` gets the live runner, if any.
   */
  recordCommand<R>(
    actor: Actor,
    sessionId: string,
    commandId: string,
    kind: WireEventKind,
    run: (runner: SessionRunner | undefined) => Promise<{ record: Record<string, unknown>; reply: (seq: number) => R }>,
  ): Promise<R> {
    return this.command(sessionId, commandId, kind, async (entry) => {
      assertNotDead(entry);
      const runner = entry.runner && isLive(entry.runner.state) ? entry.runner : undefined;
      let outcome: { record: Record<string, unknown>; reply: (seq: number) => R };
      try {
        outcome = await run(runner);
      } catch (err) {
        const error = asAppError(err);
        await this.append(entry, kind, { error: toWireError(error) }, { commandId, actor });
        throw error;
      }
      const stored = await this.append(entry, kind, outcome.record, { commandId, actor });
      return outcome.reply(stored.record.seq);
    });
  }

  // Session management (server/sidecar/session/session-management.ts) reaches the live child and
  // the in-memory entry through these three.

  /** Sends a control request to the session's live CLI; undefined when none is live. */
  async control(sessionId: string, request: HostControlRequest): Promise<Record<string, unknown> | undefined> {
    const runner = (await this.entry(sessionId)).runner;
    if (!runner || !isLive(runner.state) || !runner.state.processRunning) return undefined;
    return runner.control(request);
  }

  /** Takes a new title into the session's entry (the row is written with it) and tells the listeners. */
  async retitle(sessionId: string, title: string): Promise<SessionView> {
    const entry = await this.entry(sessionId);
    entry.title = title;
    this.rows.persistRow(entry);
    this.emitStatus(entry);
    return viewOf(entry);
  }

  /** Stops the session's child and drops its entry, its queued writes done; for a session about to be deleted. */
  async forget(sessionId: string): Promise<void> {
    const entry = this.entries.get(sessionId) ?? (await this.loading.get(sessionId)?.catch(() => undefined));
    if (!entry) return;
    const runner = entry.runner ?? (await entry.runnerStarting?.catch(() => undefined));
    await runner
      ?.dispose()
      .catch((err: unknown) => this.deps.log.error({ err, sessionId }, "runner dispose failed"));
    entry.detachRunner?.();
    await entry.tail.catch(() => undefined);
    await Promise.all([this.costs.drain(entry), this.history.drain(entry)]);
    await this.rows.flush(entry);
    this.entries.delete(sessionId);
  }

  /** Stops every child, writes what is queued, and clears the registry. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const entries = [...this.entries.values()];
    await Promise.all(
      entries.map(async (entry) => {
        const runner = entry.runner ?? (await entry.runnerStarting?.catch(() => undefined));
        if (!runner) return;
        try {
          await runner.dispose();
        } catch (err) {
          this.deps.log.error({ err, sessionId: entry.id }, "runner dispose failed");
        }
      }),
    );
    if (this.ownsWriter) await this.writer.close();
    await Promise.all(entries.map((e) => e.tail.catch(() => undefined)));
    await Promise.all(entries.map((e) => this.costs.drain(e)));
    await Promise.all(entries.map((e) => this.history.drain(e)));
    for (const entry of entries) {
      entry.detachRunner?.();
      // The children are gone: the rows say so, for the web app's lists.
      if (liveStatuses.has(entry.status)) {
        entry.status = "stopped";
        entry.pid = null;
        this.rows.persistRow(entry);
      }
    }
    await Promise.all(entries.map((e) => this.rows.flush(e)));
    this.detachWriter();
    this.entries.clear();
  }

  // -------------------------------------------------------------------------------------------
  // sessions and runners

  private async startNewSession(
    actor: Actor,
    access: WorkspaceAccess,
    input: NewSessionInput,
  ): Promise<SessionView> {
    const row = await insertSession(this.deps.db, {
      workspaceId: access.workspace.id,
      createdById: actor.id,
      claudeSessionId: randomUUID(),
      mode: input.mode,
      model: input.model ?? null,
      sidecarId: this.deps.sidecarId ?? null,
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
    this.entries.set(entry.id, entry);
    this.names.set(actor.id, actor.name);
    const created = await this.append(
      entry,
      "process",
      { phase: "created", mode: input.mode, model: input.model ?? null },
      { commandId: input.commandId, actor },
    );
    this.emitStatus(entry);
    try {
      await this.ensureRunner(entry, false);
    } catch (err) {
      await this.noteFailure(entry, "create", created.record.seq, err);
      entry.status = "stopped";
      this.rows.persistRow(entry);
      this.emitStatus(entry);
      throw asAppError(err);
    }
    return viewOf(entry);
  }

  /** The session a `session:create` with this id made, looked up in recent sessions' logs. */
  private async findCreated(workspaceId: string, userId: string, commandId: string): Promise<string | undefined> {
    const since = new Date(Date.now() - createRetryWindowMs);
    for (const id of await listRecentSessionIds(this.deps.db, workspaceId, userId, since)) {
      const event = await findSessionCommand(this.deps.db, id, commandId);
      if (event) return id;
    }
    return undefined;
  }

  /** The live runner, or a new one started (resuming the conversation when there is one). */
  private async ensureRunner(entry: SessionEntry, resume: boolean): Promise<SessionRunner> {
    if (entry.runner) return entry.runner;
    entry.runnerStarting ??= this.startRunner(entry, resume).finally(() => {
      entry.runnerStarting = undefined;
    });
    return entry.runnerStarting;
  }

  private async startRunner(entry: SessionEntry, resume: boolean): Promise<SessionRunner> {
    const configDir = path.join(this.deps.configRoot, entry.workspace.id);
    this.deps.turnSnapshots?.warm(snapshotSessionOf(entry));
    // 0700: a CLI config dir holds that workspace's transcripts.
    await mkdir(configDir, { recursive: true, mode: 0o700 });
    const mode = ZPermissionMode.safeParse(entry.mode);
    const allowBypass = entry.workspace.allowBypass;
    const runner = this.deps.createRunner(
      {
        sessionId: entry.id,
        workspaceRoot: entry.workspace.rootPath,
        ...(entry.worktreePath !== null ? { cwd: entry.worktreePath } : {}),
        configDir,
        claudeSessionId: entry.claudeSessionId,
        resume,
        permissionMode: mode.success ? mode.data : "default",
        ...(entry.model !== null ? { model: entry.model } : {}),
        allowBypass,
        includePartialMessages: this.deps.includePartialMessages ?? true,
        ...(entry.maxBudgetUsd !== null ? { maxBudgetUsd: entry.maxBudgetUsd } : {}),
        // read fresh before every spawn: trust is revoked, or the files change, at any time
        settingsTrusted: async () => {
          const ws = await this.deps.db.workspace.findUnique({ where: { id: entry.workspace.id }, select: { trustedSettingsDigest: true } });
          return settingsStillTrusted(entry.worktreePath ?? entry.workspace.rootPath, ws?.trustedSettingsDigest ?? null);
        },
        // read fresh before every spawn too: an owner narrows the network at any time
        networkPolicy: async () =>
          networkPolicyOf(await this.deps.db.workspace.findUniqueOrThrow({ where: { id: entry.workspace.id }, select: { networkPolicy: true, networkDomains: true } })),
      },
      (question) => this.decide(entry, question),
    );
    // Listen before start: the spawn and the first lines are part of the log.
    const detach = runner.onDidEvent((event) => this.onRunnerEvent(entry, event));
    try {
      await runner.start();
    } catch (err) {
      detach();
      await runner
        .dispose()
        .catch((e: unknown) => this.deps.log.error({ err: e, sessionId: entry.id }, "runner dispose failed"));
      throw err;
    }
    entry.runner = runner;
    entry.detachRunner = detach;
    entry.runnerAllowsBypass = allowBypass;
    this.applyState(entry, runner.state);
    return runner;
  }

  /**
   * A mode or model change, asked of the runner: a live CLI confirms it (or refuses, which is
   * recorded as the outcome); a runner without a live child keeps it for its next spawn. With
   * no runner at all, the value becomes the next runner's option.
   */
  private async changeLive(
    entry: SessionEntry,
    kind: "set-mode" | "set-model",
    requested: string,
    commandId: string,
    actor: Actor,
    ask: (runner: SessionRunner) => Promise<string>,
  ): Promise<{ seq: number; value: string }> {
    assertNotDead(entry);
    const runner = entry.runner ?? (await entry.runnerStarting?.catch(() => undefined));
    const field = kind === "set-mode" ? "mode" : "model";
    const live = runner !== undefined && isLive(runner.state);
    let value = requested;
    if (runner) {
      try {
        value = await ask(runner);
      } catch (err) {
        const error = asAppError(err);
        await this.append(entry, kind, { requested, error: toWireError(error) }, { commandId, actor });
        throw error;
      }
    }
    const stored = await this.append(entry, kind, { requested, [field]: value, live }, { commandId, actor });
    return { seq: stored.record.seq, value };
  }

  /** Drops a runner without a live child, so the next prompt starts one with the current options. */
  private async retireRunner(entry: SessionEntry): Promise<void> {
    const runner = entry.runner;
    if (!runner) return;
    entry.runner = undefined;
    entry.detachRunner?.();
    entry.detachRunner = undefined;
    entry.runnerAllowsBypass = entry.workspace.allowBypass;
    await runner
      .dispose()
      .catch((err: unknown) => this.deps.log.error({ err, sessionId: entry.id }, "runner dispose failed"));
  }

  /**
   * Asks the decider, queues the decision's log event, and lets the runner write the answer at
   * once. The event is not awaited: the decider has stored the decision already (the Approval row
   * is settled before it answers), the event is queued before the answer reaches the CLI so that
   * every line the answer causes gets a later `seq`, and browsers see it only once it is stored.
   */
  private async decide(entry: SessionEntry, question: PermissionQuestion): Promise<PermissionDecision> {
    const decider = this.deps.decidePermission ?? denyWithoutQueue;
    const decision = await decider({ sessionId: entry.id, workspaceId: entry.workspace.id }, question);
    const record = {
      requestId: question.requestId,
      toolName: question.request.tool_name,
      toolUseId: question.request.tool_use_id ?? null,
      behavior: decision.behavior,
      ...(decision.behavior === "deny" ? { message: decision.message } : {}),
    };
    // appendRaw logs a failed write; the answer stands either way (the Approval row has it). A
    // hub that is closing has stopped its children: their withdrawn questions need no event.
    if (!this.closed) void this.appendRaw(entry, "decision", JSON.stringify(record), record);
    return decision;
  }

  private onRunnerEvent(entry: SessionEntry, event: RunnerEvent): void {
    switch (event.type) {
      case "line":
        this.appendLine(entry, event.raw, event.message);
        this.costs.feedCost(entry, { type: "message", message: event.message });
        break;
      case "bad-line":
        this.appendQuietly(entry, "cli-bad-line", { raw: event.raw, error: event.error });
        break;
      case "stderr":
        this.appendQuietly(entry, "stderr", { text: event.text });
        break;
      case "process": {
        const { type: _type, ...fields } = event;
        this.appendQuietly(entry, "process", fields);
        entry.pid = event.phase === "spawned" ? event.pid : null;
        this.rows.persistRow(entry);
        if (event.phase === "spawned") {
          // Before any stdout line of this child: the reducer must know a resume resets the counters.
          this.costs.feedCost(
            entry,
            event.resumed
              ? {
                  type: "process-spawned",
                  resume: { claudeSessionId: entry.claudeSessionId, previousExit: entry.lastExit ?? "crashed" },
                }
              : { type: "process-spawned", claudeSessionId: entry.claudeSessionId },
          );
        } else {
          this.endTurnSnapshot(entry);
          // Exit code 1 is the CLI's ordinary end after stdin closes with an error turn; it saved its state.
          entry.lastExit = event.signal === null && (event.code === 0 || event.code === 1) ? "graceful" : "crashed";
        }
        break;
      }
      case "state":
        this.applyState(entry, event.state);
        break;
    }
  }

  /** The turn is over: its after-snapshot is taken, and its changes logged as a `changes` event. */
  private endTurnSnapshot(entry: SessionEntry): void {
    this.deps.turnSnapshots?.turnEnded(entry.id, (payload) => {
      if (!this.closed) this.appendQuietly(entry, "changes", payload);
    });
  }

  private appendLine(entry: SessionEntry, raw: string, message: CliMessage): void {
    this.appendRaw(entry, "cli", raw, wirePayloadOf(raw, message));
    if (message.type === "result") {
      this.endTurnSnapshot(entry);
      entry.conversationStarted = true;
      countResult(entry, message);
      if (typeof message.result === "string" && message.result) this.history.indexText(entry, message.result);
    } else if (message.type === "system" && message.subtype === "session_title_changed") {
      entry.title = message.title;
      this.rows.persistRow(entry);
      this.emitStatus(entry);
    }
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  private applyState(entry: SessionEntry, state: SessionState): void {
    const mode = state.permissionMode ?? entry.mode;
    const model = state.model ?? entry.model;
    if (state.status === entry.status && mode === entry.mode && model === entry.model) return;
    entry.status = state.status;
    entry.mode = mode;
    entry.model = model;
    this.rows.persistRow(entry);
    this.emitStatus(entry);
  }

  // -------------------------------------------------------------------------------------------
  // the log

  private command<R>(
    sessionId: string,
    commandId: string,
    kind: WireEventKind,
    run: (entry: SessionEntry) => Promise<R>,
  ): Promise<R> {
    return (async () => {
      this.assertOpen();
      const entry = await this.entry(sessionId);
      const known = entry.commands.get(commandId);
      if (known) {
        if (known.kind !== kind) throw reusedCommandId();
        return known.outcome as Promise<R>;
      }
      const outcome = (async () => {
        const prior = await findSessionCommand(this.deps.db, sessionId, commandId);
        if (prior) return outcomeFromLog(prior, kind) as R;
        return run(entry);
      })();
      entry.commands.remember(commandId, { kind, outcome });
      return outcome;
    })();
  }

  private append(
    entry: SessionEntry,
    kind: WireEventKind,
    value: unknown,
    command?: { commandId: string; actor: Actor },
  ): Promise<StoredEvent> {
    if (command) this.names.set(command.actor.id, command.actor.name);
    return this.appendRaw(entry, kind, JSON.stringify(value), value, command);
  }

  private appendRaw(
    entry: SessionEntry,
    kind: WireEventKind,
    payload: string,
    value: unknown,
    command?: { commandId: string; actor: Actor },
  ): Promise<StoredEvent> {
    const stored = this.writer.append({
      sessionId: entry.id,
      kind,
      payload,
      value,
      commandId: command?.commandId ?? null,
      userId: command?.actor.id ?? null,
    });
    entry.tail = stored.catch(() => undefined);
    if (!command) {
      stored.catch((err: unknown) =>
        this.deps.log.error({ err, sessionId: entry.id, kind }, "an event was not stored and is lost"),
      );
    }
    return stored;
  }

  private appendQuietly(entry: SessionEntry, kind: WireEventKind, value: unknown): void {
    void this.appendRaw(entry, kind, JSON.stringify(value), value);
  }

  /** Records that a command's effect failed after the command itself was logged. */
  private async noteFailure(entry: SessionEntry, command: string, seq: number, err: unknown): Promise<void> {
    this.deps.log.warn({ err, sessionId: entry.id, command }, "session command failed");
    await this.appendRaw(
      entry,
      "process",
      JSON.stringify({ phase: "command-failed", command, commandSeq: seq, error: toWireError(err) }),
      { phase: "command-failed", command, commandSeq: seq, error: toWireError(err) },
    ).catch(() => undefined);
  }

  private onStored(stored: StoredEvent): void {
    const entry = this.entries.get(stored.record.sessionId);
    const event = toWireEvent(stored.record, { value: stored.value, userName: this.nameOf(stored.record.userId) });
    if (entry) {
      entry.lastNotifiedSeq = stored.record.seq;
      for (const captured of entry.captures) captured.push(event);
    }
    for (const listener of this.eventListeners) listener(event);
  }

  // -------------------------------------------------------------------------------------------
  // entries, views, rows

  private entry(sessionId: string): Promise<SessionEntry> {
    const known = this.entries.get(sessionId);
    if (known) return Promise.resolve(known);
    let loading = this.loading.get(sessionId);
    if (!loading) {
      loading = this.load(sessionId).finally(() => this.loading.delete(sessionId));
      this.loading.set(sessionId, loading);
    }
    return loading;
  }

  private async load(sessionId: string): Promise<SessionEntry> {
    const row = await findSession(this.deps.db, sessionId);
    if (!row) throw new AppError(ErrorCode.notFound, "No such session, or you are not a member of its workspace.");
    const [lastSeq, costUsd, results, countedResultIds] = await Promise.all([
      this.writer.lastSeq(sessionId),
      sumSessionCost(this.deps.db, sessionId),
      listResultCandidates(this.deps.db, sessionId),
      listRecordedResultIds(this.deps.db, sessionId),
    ]);
    const entry = newEntry(row, row.workspace, { fresh: false, lastSeq, costUsd, conversationStarted: false });
    entry.cost = createCostState({ countedResultIds });
    for (const text of results) {
      const parsed = safeParse(text);
      if (!isResult(parsed)) continue;
      entry.conversationStarted = true;
      countResult(entry, parsed);
    }
    this.names.set(row.createdBy.id, row.createdBy.name);
    this.entries.set(sessionId, entry);
    return entry;
  }

  /** Tells listeners the session's view, after the events appended so far. */
  private emitStatus(entry: SessionEntry): void {
    void entry.tail.then(() => {
      const view = viewOf(entry);
      for (const listener of this.statusListeners) listener(view);
    });
  }

  private async learnNames(rows: readonly SessionEventRecord[]): Promise<void> {
    const missing = [
      ...new Set(rows.map((r) => r.userId).filter((id): id is string => id !== null && !this.names.has(id))),
    ];
    if (missing.length === 0) return;
    for (const [id, name] of await findUserNames(this.deps.db, missing)) this.names.set(id, name);
  }

  private nameOf(userId: string | null): string | undefined {
    return userId === null ? undefined : this.names.get(userId);
  }

  private assertOpen(): void {
    if (this.closed) throw shuttingDown();
  }
}

/**
 * The payload browsers get for a CLI line: the object the CLI printed. The decoder hands back
 * that very object, except for frames it wraps (unknown types, unknown control requests): those
 * are parsed again from the raw line, so a live event equals its replay from the log.
 */
function wirePayloadOf(raw: string, message: CliMessage): unknown {
  if (message.type === "unknown") return message.value;
  if (message.type === "control_request" && message.request.subtype === "unknown") return safeParse(raw);
  return message;
}

/** The first outcome of a command, rebuilt from the event it logged. */
function outcomeFromLog(event: SessionEventRecord, kind: WireEventKind): unknown {
  if (event.kind !== kind) throw reusedCommandId();
  const payload = safeParse(event.payload) as { error?: WireError; mode?: string; model?: string } | undefined;
  if (payload?.error) throw new AppError(payload.error.code, payload.error.message);
  if (kind === "set-mode") return { seq: event.seq, mode: payload?.mode ?? "" };
  if (kind === "set-model") return { seq: event.seq, model: payload?.model ?? "" };
  if (kind === "set-thinking" || kind === "cancel-queued") return { ...(payload ?? {}), seq: event.seq };
  return { seq: event.seq };
}

/** The decider when no approval queue is connected: the CLI must get an answer, and this one says why. */
const denyWithoutQueue: SessionPermissionDecider = async (_session, question) => ({
  behavior: "deny",
  message: `Conduit has no approval queue connected, so ${question.request.tool_name} was not allowed. Switch the permission mode (acceptEdits lets edits through) or ask the operator to enable approvals.`,
});

