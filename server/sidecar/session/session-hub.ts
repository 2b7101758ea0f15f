/**
 * The session hub: the one object the socket layer and the sidecar's other session modules talk
 * to. It takes the commands of people (create, prompt, interrupt, stop, mode, model, take-backs,
 * controls, management) and composes the parts that do the work:
 *
 *   session-registry        the entries of the sessions this sidecar touched (loaded once)
 *   session-command-runner  once per commandId (command-memo), else answered from the log
 *   session-creation        new sessions: row, worktree, first child
 *   session-lifecycle       runner start/exit, runner events → log and entry
 *   session-event-log       appends (persist first) and user names
 *   session-subscriptions   fan-out to listeners and the catch-up of subscribers
 *   session-cost-recorder   the cost ledger and token counts
 *   session-row-writer      coalesced writes of the Session row's live fields (and search text)
 *   session-history-indexer the history search text
 *
 * Every runner event and every user command goes through the event writer (persist first);
 * listeners (the socket layer) hear of an event only once it is committed.
 *
 * Authorization is the caller's job (the socket layer asks the database who is a member); the
 * hub trusts the actor it is given. The hub must not grow logic of its own beyond the order of
 * a command's steps: new behaviour goes in a part (or a new one), wired here in a line or two.
 */
import { randomUUID } from "node:crypto";
import { faultPoint } from "@/server/sidecar/fault-injection";
import type { WorkspaceAccess } from "@/server/db/sessions";
import { checkMonthlyBudgets } from "@/server/db/cost-entries";
import { assertWithinBudget } from "@/server/domain/cost/budget";
import { isLive } from "@/server/domain/session/session-state";
import type { HostControlRequest } from "@/server/shared/claude-protocol/encode";
import type { PermissionMode } from "@/server/shared/claude-protocol/messages";
import { AppError, ErrorCode, toWireError } from "@/server/shared/errors/app-error";
import { pickReclaimVictim, type AdmissionRefusal, type ReclaimCandidate, type SlotOwner } from "@/server/sidecar/process/admission";
import {
  isLiveSessionStatus,
  type CommandAccepted,
  type PermissionModeChoice,
  type SessionStatus,
  type SessionView,
  type SetModelResult,
  type SetModeResult,
  type WireEvent,
  type WireEventKind,
} from "@/server/shared/wire/session";
import type { PromptImage } from "@/server/shared/wire/session-controls";
import { rememberBounded } from "./command-memo";
import { storePromptImages } from "./prompt-images";
import { SessionCommandRunner } from "./session-command-runner";
import type { SessionCommands, SessionFeed } from "./session-commands";
import { SessionCostRecorder } from "./session-cost-recorder";
import { SessionCreation } from "./session-creation";
import {
  asAppError,
  assertNotDead,
  bypassRefused,
  maxRememberedCommands,
  snapshotSessionOf,
  viewOf,
  type SessionEntry,
} from "./session-entry";
import { SessionEventLog } from "./session-event-log";
import { SessionHistoryIndexer } from "./session-history-indexer";
import type { Actor, NewSessionInput, SessionHubDeps, SubscribeSnapshot } from "./session-hub-types";
import { SessionLifecycle } from "./session-lifecycle";
import { SessionRegistry } from "./session-registry";
import { SessionRowWriter } from "./session-row-writer";
import type { SessionRunner } from "./session-runner-contract";
import { SessionSubscriptions } from "./session-subscriptions";
import type { SnapshotSession } from "./turn-snapshots";

export type {
  Actor,
  CreateRunner,
  NewSessionInput,
  SessionHubDeps,
  SessionPermissionDecider,
  SubscribeSnapshot,
} from "./session-hub-types";

/** Registry of live sessions, event persistence and fan-out. */
export class SessionHub implements SessionCommands, SessionFeed {
  private readonly events: SessionEventLog;
  private readonly registry: SessionRegistry;
  private readonly subscriptions: SessionSubscriptions;
  private readonly detachWriter: () => void;
  private closed = false;
  private readonly rows: SessionRowWriter;
  private readonly history: SessionHistoryIndexer;
  private readonly costs: SessionCostRecorder;
  private readonly lifecycle: SessionLifecycle;
  private readonly creation: SessionCreation;
  private readonly commands: SessionCommandRunner;
  private readonly detachLeases: () => void;

  constructor(private readonly deps: SessionHubDeps) {
    this.events = new SessionEventLog({ db: deps.db, log: deps.log, writer: deps.writer });
    this.registry = new SessionRegistry({ db: deps.db, events: this.events });
    this.subscriptions = new SessionSubscriptions({
      db: deps.db,
      events: this.events,
      known: (id) => this.registry.known(id),
      entry: (id) => this.registry.entry(id),
      subscribePage: deps.subscribePage,
    });
    this.detachWriter = this.events.writer.onDidStore((stored) => this.subscriptions.onStored(stored));
    this.rows = new SessionRowWriter({ db: deps.db, log: deps.log, sidecarId: deps.sidecarId ?? null });
    this.history = new SessionHistoryIndexer({ rows: this.rows });
    this.costs = new SessionCostRecorder({ db: deps.db, log: deps.log, now: () => this.now(), emitStatus: (entry) => this.subscriptions.emitStatus(entry), onTurnCost: deps.onTurnCost });
    this.lifecycle = new SessionLifecycle(deps, {
      events: this.events,
      rows: this.rows,
      subscriptions: this.subscriptions,
      costs: this.costs,
      history: this.history,
      isClosed: () => this.closed,
    });
    this.creation = new SessionCreation({
      db: deps.db,
      sidecarId: deps.sidecarId ?? null,
      registry: this.registry,
      events: this.events,
      subscriptions: this.subscriptions,
      rows: this.rows,
      lifecycle: this.lifecycle,
      isClosed: () => this.closed,
    });
    this.commands = new SessionCommandRunner({ db: deps.db, registry: this.registry, isClosed: () => this.closed });
    // Fencing: a lease found lost stops the session's runner here; the entry is dropped (stale).
    this.detachLeases =
      deps.leases?.onLost((id) => void this.dropEntry(id, true).catch((err: unknown) => deps.log.error({ err, sessionId: id }, "fencing a session failed"))) ??
      (() => undefined);
  }

  /**
   * Drops what this hub remembers of a session another node ran (`fence`: stopping its runner
   * here first); a later use reloads it from the database. Listeners get its view as stored.
   */
  async dropEntry(sessionId: string, fence = false): Promise<void> {
    const entry = this.registry.known(sessionId);
    if (!entry || (!fence && (entry.runner || entry.runnerStarting))) return;
    if (fence) await this.lifecycle.fence(entry);
    this.registry.delete(sessionId);
    this.events.writer.forget(sessionId);
    if (!this.closed) this.subscriptions.emitStatus(await this.registry.entry(sessionId));
  }

  /** Called with every event once it is in the log, in `seq` order per session. */
  onDidEmitEvent(listener: (event: WireEvent) => void): () => void {
    return this.subscriptions.onDidEmitEvent(listener);
  }

  /** Called when a session's status, mode, model, title or figures change. */
  onDidChangeStatus(listener: (view: SessionView) => void): () => void {
    return this.subscriptions.onDidChangeStatus(listener);
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
    return this.creation.createSession(actor, access, input);
  }

  /**
   * Reads one page of the log after `afterSeq` and hands it to `deliver`; the last page is the
   * catch-up, and `deliver` must join the room synchronously (session-subscriptions.ts).
   */
  subscribe(sessionId: string, afterSeq: number, deliver: (snapshot: SubscribeSnapshot) => void): Promise<void> {
    return this.subscriptions.subscribe(sessionId, afterSeq, deliver);
  }

  /** One event with its whole payload, up to `maxFetchEventChars` (the download has the rest). */
  fetchEvent(sessionId: string, seq: number): Promise<WireEvent> {
    return this.subscriptions.fetchEvent(sessionId, seq);
  }

  /** The current view of a session. */
  async view(sessionId: string): Promise<SessionView> {
    return viewOf(await this.registry.entry(sessionId));
  }

  /** Views of the sessions of a workspace this hub holds in memory. */
  async liveViews(workspaceId: string): Promise<SessionView[]> {
    return this.registry.all().filter((e) => e.workspace.id === workspaceId).map((e) => viewOf(e));
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
    return this.commands.run(sessionId, commandId, "prompt", async (entry) => {
      assertNotDead(entry);
      this.assertRoomInLog(entry);
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
      await this.lifecycle.claimOwnership(entry);
      const refs = await storePromptImages(this.deps.db, entry.id, images);
      const stored = await this.events.append(
        entry,
        "prompt",
        refs.length > 0 ? { text, uuid, images: refs } : { text, uuid },
        { commandId, actor },
      );
      faultPoint("crash-after-prompt-event");
      this.history.indexText(entry, text);
      try {
        // the before-turn snapshot runs while a child starts; it never throws
        const snapshotted = this.deps.turnSnapshots?.promptDelivered(snapshotSessionOf(entry), stored.record.seq);
        const runner = await this.lifecycle.ensureRunner(entry, entry.conversationStarted);
        await snapshotted?.();
        await runner.prompt(images.length > 0 ? { uuid, text, images } : { uuid, text });
      } catch (err) {
        this.lifecycle.endTurnSnapshot(entry);
        await this.events.noteFailure(entry, "prompt", stored.record.seq, err);
        throw err;
      }
      return { seq: stored.record.seq };
    });
  }

  /** Interrupts the running turn (a no-op in the log's eyes when no child is live). */
  interrupt(actor: Actor, sessionId: string, commandId: string): Promise<CommandAccepted> {
    return this.commands.run(sessionId, commandId, "interrupt", async (entry) => {
      const stored = await this.events.append(entry, "interrupt", {}, { commandId, actor });
      const runner = entry.runner;
      if (runner && isLive(runner.state)) {
        try {
          await runner.interrupt();
        } catch (err) {
          await this.events.noteFailure(entry, "interrupt", stored.record.seq, err);
          throw asAppError(err);
        }
      }
      return { seq: stored.record.seq };
    });
  }

  /** Stops the child politely; the next prompt resumes the conversation. */
  stop(actor: Actor, sessionId: string, commandId: string): Promise<CommandAccepted> {
    return this.commands.run(sessionId, commandId, "stop", async (entry) => {
      const stored = await this.events.append(entry, "stop", {}, { commandId, actor });
      const runner = entry.runner ?? (await entry.runnerStarting?.catch(() => undefined));
      if (runner) {
        try {
          await runner.stop();
        } catch (err) {
          await this.events.noteFailure(entry, "stop", stored.record.seq, err);
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
    return this.commands.run(sessionId, commandId, "set-mode", async (entry) => {
      entry.workspace = { ...entry.workspace, allowBypass };
      if (mode === "bypassPermissions" && entry.runner && !entry.runnerAllowsBypass) {
        // The flag is fixed at spawn: only a new runner (and child) can offer bypass.
        if (isLive(entry.runner.state)) {
          throw new AppError(
            ErrorCode.conflict,
            "This session's CLI was started before bypassPermissions was allowed. Press \"End process\" in the session header; the next prompt restarts it with bypass available.",
          );
        }
        await this.lifecycle.retireRunner(entry);
      }
      const confirmed = await this.lifecycle.changeLive(entry, "set-mode", mode, commandId, actor, (runner) =>
        runner.setPermissionMode(mode as PermissionMode),
      );
      entry.mode = confirmed.value;
      this.rows.persistRow(entry);
      this.subscriptions.emitStatus(entry);
      return { seq: confirmed.seq, mode: confirmed.value };
    });
  }

  /** Switches the model, as {@link setMode} does the mode. */
  setModel(actor: Actor, sessionId: string, model: string, commandId: string): Promise<SetModelResult> {
    return this.commands.run(sessionId, commandId, "set-model", async (entry) => {
      const confirmed = await this.lifecycle.changeLive(entry, "set-model", model, commandId, actor, (runner) =>
        runner.setModel(model),
      );
      entry.model = confirmed.value;
      this.rows.persistRow(entry);
      this.subscriptions.emitStatus(entry);
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
    return this.commands.run(sessionId, commandId, kind, async (entry) => {
      const { event, result } = await run(snapshotSessionOf(entry), entry.runner?.state.status ?? entry.status);
      const stored = await this.events.append(entry, kind, event, { commandId, actor });
      return { ...result, seq: stored.record.seq };
    });
  }

  /** The session's runner when its CLI child is live (control requests need one). */
  async liveRunner(sessionId: string): Promise<SessionRunner | undefined> {
    const entry = await this.registry.entry(sessionId);
    const runner = entry.runner;
    return runner && isLive(runner.state) && runner.state.processRunning ? runner : undefined;
  }

  /** Any live runner of this sidecar (for what every CLI answers alike, such as the model list). */
  someLiveRunner(): SessionRunner | undefined {
    for (const entry of this.registry.all()) {
      const runner = entry.runner;
      if (runner && isLive(runner.state) && runner.state.processRunning) return runner;
    }
    return undefined;
  }

  /**
   * A session's log is bounded (CONDUIT_SESSION_EVENTS_MAX): past it, a new prompt is refused
   * before anything is logged (the turn already running ends as usual; no event is dropped).
   */
  private assertRoomInLog(entry: SessionEntry): void {
    const max = this.deps.eventsMax;
    if (max === undefined || entry.lastNotifiedSeq < max) return;
    this.deps.log.warn({ sessionId: entry.id, events: entry.lastNotifiedSeq, max }, "prompt refused: the session's event log is full");
    throw new AppError(
      ErrorCode.conflict,
      `This session is full: its log holds ${entry.lastNotifiedSeq} events, the most one session may keep (CONDUIT_SESSION_EVENTS_MAX). ` +
        "Start a new session to go on; this one stays readable.",
      { reason: "session_full", events: entry.lastNotifiedSeq, max },
    );
  }

  /** Whose slot a session's CLI holds (admission's `ownerOf`): its creator and workspace, when this sidecar knows it. */
  slotOwner(sessionId: string): SlotOwner | undefined {
    const entry = this.registry.known(sessionId);
    return entry === undefined ? undefined : { userId: entry.createdBy.id, workspaceId: entry.workspace.id };
  }

  /**
   * Makes room for `forSessionId`'s child when a cap refused it (`reason`): stops the idle CLI
   * `pickReclaimVictim` allows (one of the same person's sessions, or one idle past the cull
   * time; no turn, no approval waiting; its next prompt resumes it, as after an idle cull).
   * False when none may give way.
   */
  async reclaimIdleChild(forSessionId: string, reason: AdmissionRefusal = "session_limit"): Promise<boolean> {
    const runners = new Map<string, SessionRunner>();
    const candidates: ReclaimCandidate[] = [];
    for (const entry of this.registry.all()) {
      const runner = entry.runner;
      if (entry.id === forSessionId || !runner) continue;
      const state = runner.state;
      if (!state.processRunning) continue;
      runners.set(entry.id, runner);
      candidates.push({
        sessionId: entry.id,
        owner: { userId: entry.createdBy.id, workspaceId: entry.workspace.id },
        idle: state.status === "idle" && state.pendingApprovals.length === 0,
        lastActivityAt: state.lastActivityAt,
      });
    }
    const victim = pickReclaimVictim(candidates, { sessionId: forSessionId, owner: this.slotOwner(forSessionId) }, reason, this.now(), this.deps.idleCullMs ?? 0);
    const runner = victim === undefined ? undefined : runners.get(victim.sessionId);
    if (victim === undefined || runner === undefined) {
      this.deps.log.info({ forSessionId, reason }, "no idle CLI may give way (only the same person's, or one idle past the cull time)");
      return false;
    }
    this.deps.log.info({ sessionId: victim.sessionId, forSessionId, reason }, "stopping an idle CLI to make room");
    await runner.stop();
    return true;
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
    return this.commands.run(sessionId, commandId, kind, async (entry) => {
      assertNotDead(entry);
      const runner = entry.runner && isLive(entry.runner.state) ? entry.runner : undefined;
      let outcome: { record: Record<string, unknown>; reply: (seq: number) => R };
      try {
        outcome = await run(runner);
      } catch (err) {
        const error = asAppError(err);
        await this.events.append(entry, kind, { error: toWireError(error) }, { commandId, actor });
        throw error;
      }
      const stored = await this.events.append(entry, kind, outcome.record, { commandId, actor });
      return outcome.reply(stored.record.seq);
    });
  }

  // Session management (server/sidecar/session/session-management.ts) reaches the live child and
  // the in-memory entry through these three.

  /** Sends a control request to the session's live CLI; undefined when none is live. */
  async control(sessionId: string, request: HostControlRequest): Promise<Record<string, unknown> | undefined> {
    const runner = (await this.registry.entry(sessionId)).runner;
    if (!runner || !isLive(runner.state) || !runner.state.processRunning) return undefined;
    return runner.control(request);
  }

  /** Takes a new title into the session's entry (the row is written with it) and tells the listeners. */
  async retitle(sessionId: string, title: string): Promise<SessionView> {
    const entry = await this.registry.entry(sessionId);
    entry.title = title;
    this.rows.persistRow(entry);
    this.subscriptions.emitStatus(entry);
    return viewOf(entry);
  }

  /** Stops the session's child and drops its entry, its queued writes done; for a session about to be deleted. */
  async forget(sessionId: string): Promise<void> {
    const entry = this.registry.known(sessionId) ?? (await this.registry.loadingEntry(sessionId));
    if (!entry) return;
    const runner = entry.runner ?? (await entry.runnerStarting?.catch(() => undefined));
    await runner
      ?.dispose()
      .catch((err: unknown) => this.deps.log.error({ err, sessionId }, "runner dispose failed"));
    entry.detachRunner?.();
    await entry.tail.catch(() => undefined);
    await this.costs.drain(entry);
    // the row's last changes and its queued search text
    await this.rows.flush(entry);
    this.registry.delete(sessionId);
    await this.deps.leases?.release(sessionId);
  }

  /** Stops every child, writes what is queued, and clears the registry. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const entries = this.registry.all();
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
    await this.events.close();
    await Promise.all(entries.map((e) => e.tail.catch(() => undefined)));
    await Promise.all(entries.map((e) => this.costs.drain(e)));
    // (the rows' queued search text goes with the flush below)
    for (const entry of entries) {
      entry.detachRunner?.();
      // The children are gone: the rows say so, for the web app's lists.
      if (isLiveSessionStatus(entry.status)) {
        entry.status = "stopped";
        entry.pid = null;
        this.rows.persistRow(entry);
      }
    }
    await Promise.all(entries.map((e) => this.rows.flush(e)));
    this.detachWriter();
    this.detachLeases();
    this.registry.clear();
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }
}

