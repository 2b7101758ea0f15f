/**
 * Runner lifecycle: starting a session's CLI child (resuming its conversation), mapping every
 * runner event to the log and the entry (status, pid, title, cost, tokens, turn snapshots),
 * logging permission decisions, asking a runner for a mode or model change, and retiring a
 * runner whose options changed.
 *
 * Owns: `entry.runner`, `runnerStarting`, `detachRunner`, `runnerAllowsBypass`, `pid`, `lastExit`,
 * `conversationStarted`, and the entry's status/mode/model as the runner reports them. Must not:
 * take commands from people (the hub does, and calls in here), decide permissions (the decider
 * does), or dispose runners at shutdown (the hub's `close`/`forget`).
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { networkPolicyOf } from "@/server/domain/workspace/network-policy";
import { isLive, type SessionState } from "@/server/domain/session/session-state";
import { ZPermissionMode, type PermissionDecision } from "@/server/shared/claude-protocol/encode";
import type { CliMessage } from "@/server/shared/claude-protocol/messages";
import { toWireError } from "@/server/shared/errors/app-error";
import { workspaceDoor } from "@/server/workspace-agent";
import { countResult, type SessionCostRecorder } from "./session-cost-recorder";
import { asAppError, assertNotDead, safeParse, snapshotSessionOf, type SessionEntry } from "./session-entry";
import type { SessionEventLog } from "./session-event-log";
import type { SessionHistoryIndexer } from "./session-history-indexer";
import type { Actor, SessionHubDeps, SessionPermissionDecider } from "./session-hub-types";
import type { SessionRowWriter } from "./session-row-writer";
import type { PermissionQuestion, RunnerEvent, SessionRunner } from "./session-runner-contract";
import type { SessionSubscriptions } from "./session-subscriptions";
import { refreshTakenOver } from "./session-takeover";
import { workspaceFilesScope } from "./workspace-files-scope";

/** The hub's parts the lifecycle feeds. */
export interface SessionLifecycleParts {
  events: SessionEventLog;
  rows: SessionRowWriter;
  subscriptions: SessionSubscriptions;
  costs: SessionCostRecorder;
  history: SessionHistoryIndexer;
  /** The hub is closing: its children are stopping, their late events are not logged. */
  isClosed: () => boolean;
}

export class SessionLifecycle {
  constructor(
    private readonly deps: SessionHubDeps,
    private readonly parts: SessionLifecycleParts,
  ) {}

  /** The live runner, or a new one started (resuming the conversation when there is one). */
  async ensureRunner(entry: SessionEntry, resume: boolean): Promise<SessionRunner> {
    if (entry.runner) return entry.runner;
    entry.runnerStarting ??= this.startRunner(entry, resume).finally(() => {
      entry.runnerStarting = undefined;
    });
    return entry.runnerStarting;
  }


  /**
   * Makes sure this node owns the session before a command that needs its CLI is logged: without
   * a runner here, the lease is claimed (another node's unexpired lease throws
   * SessionOwnedElsewhere, before anything is written) and a session taken over is re-read.
   */
  async claimOwnership(entry: SessionEntry): Promise<void> {
    if (entry.runner || !this.deps.leases) return;
    const lease = await this.deps.leases.claim(entry.id);
    if (!lease.heldAlready) await refreshTakenOver(this.deps.db, this.parts.events.writer, entry);
  }

  private async startRunner(entry: SessionEntry, resume: boolean): Promise<SessionRunner> {
    // Ownership first (session-leases.ts): another node's unexpired lease throws SessionOwnedElsewhere.
    await this.claimOwnership(entry);
    try {
      return await this.spawnRunner(entry, resume || entry.conversationStarted);
    } catch (err) {
      await this.deps.leases?.release(entry.id);
      throw err;
    }
  }

  private async spawnRunner(entry: SessionEntry, resume: boolean): Promise<SessionRunner> {
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
        settingsTrusted: () => this.settingsStillTrusted(entry),
        // read fresh before every spawn too: an owner narrows the network at any time
        networkPolicy: async () =>
          networkPolicyOf(await this.deps.db.workspace.findUniqueOrThrow({ where: { id: entry.workspace.id }, select: { networkPolicy: true, networkDomains: true } })),
        // and the workspace's MCP servers (mcp-config.ts)
        mcpServers: async () => (await this.deps.mcpServersOf?.(entry.workspace.id)) ?? [],
        ...(this.deps.watched ? { watched: () => this.deps.watched!(entry.id) } : {}),
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
   * Whether the workspace's settings files (in the session's worktree when it has one) are still
   * the ones an owner trusted, read by the workspace's files door.
   */
  private async settingsStillTrusted(entry: SessionEntry): Promise<boolean> {
    const ws = await this.deps.db.workspace.findUnique({ where: { id: entry.workspace.id }, select: { trustedSettingsDigest: true } });
    const trustedDigest = ws?.trustedSettingsDigest ?? null;
    if (trustedDigest === null) return false;
    let under: string | undefined;
    if (entry.worktreePath !== null) {
      // the worktree lives inside the workspace (`.conduit/worktrees/…`); anywhere else trusts nothing
      const rel = path.relative(entry.workspace.rootPath, entry.worktreePath);
      if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return false;
      under = rel.split(path.sep).join("/");
    }
    const scope = await workspaceFilesScope(this.deps.db, entry.workspace);
    return workspaceDoor().call(scope, "settings.stillTrusted", { trustedDigest, ...(under !== undefined ? { under } : {}) });
  }

  /** Drops a runner without a live child, so the next prompt starts one with the current options. */
  async retireRunner(entry: SessionEntry): Promise<void> {
    const runner = entry.runner;
    if (!runner) return;
    entry.runner = undefined;
    entry.detachRunner?.();
    entry.detachRunner = undefined;
    entry.runnerAllowsBypass = entry.workspace.allowBypass;
    await runner
      .dispose()
      .catch((err: unknown) => this.deps.log.error({ err, sessionId: entry.id }, "runner dispose failed"));
    await this.deps.leases?.release(entry.id);
  }

  /**
   * Fencing: this node lost the session's lease (another node may run it now). Its runner is cut
   * off at once (no more events from it, no more stdin writes) and its child stopped.
   */
  async fence(entry: SessionEntry): Promise<void> {
    const runner = entry.runner ?? (await entry.runnerStarting?.catch(() => undefined));
    entry.detachRunner?.();
    entry.detachRunner = undefined;
    entry.runner = undefined;
    this.deps.log.warn({ sessionId: entry.id, pid: entry.pid }, "session lease lost: its runner is stopped here");
    await runner
      ?.dispose()
      .catch((err: unknown) => this.deps.log.error({ err, sessionId: entry.id }, "runner dispose failed"));
  }


  /**
   * A mode or model change, asked of the runner: a live CLI confirms it (or refuses, which is
   * recorded as the outcome); a runner without a live child keeps it for its next spawn. With
   * no runner at all, the value becomes the next runner's option.
   */
  async changeLive(
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
        await this.parts.events.append(entry, kind, { requested, error: toWireError(error) }, { commandId, actor });
        throw error;
      }
    }
    const stored = await this.parts.events.append(entry, kind, { requested, [field]: value, live }, { commandId, actor });
    return { seq: stored.record.seq, value };
  }

  /**
   * Asks the decider, queues the decision's log event, and lets the runner write the answer at
   * once. The event is not awaited: the decider has stored the decision already (the Approval row
   * is settled before it answers), the event is queued before the answer reaches the CLI so that
   * every line the answer causes gets a later `seq`, and browsers see it only once it is stored.
   */
  private async decide(entry: SessionEntry, question: PermissionQuestion): Promise<PermissionDecision> {
    const decider = this.deps.decidePermission ?? denyWithoutQueue;
    const configDir = path.join(this.deps.configRoot, entry.workspace.id);
    const { decidedBy, ...answer } = await decider(
      { sessionId: entry.id, workspaceId: entry.workspace.id, rootPath: entry.workspace.rootPath, configDir },
      question,
    );
    const decision = answer as PermissionDecision;
    const record = {
      requestId: question.requestId,
      toolName: question.request.tool_name,
      toolUseId: question.request.tool_use_id ?? null,
      behavior: decision.behavior,
      ...(decision.behavior === "deny" ? { message: decision.message } : {}),
    };
    // appendRaw logs a failed write; the answer stands either way (the Approval row has it). A
    // hub that is closing has stopped its children: their withdrawn questions need no event.
    // The event names who decided (its userId); a rule, the deadline or a cancel leave it without one.
    if (!this.parts.isClosed()) void this.parts.events.appendRaw(entry, "decision", JSON.stringify(record), record, decidedBy ? { actor: decidedBy } : undefined);
    return decision;
  }


  private onRunnerEvent(entry: SessionEntry, event: RunnerEvent): void {
    switch (event.type) {
      case "line":
        this.appendLine(entry, event.raw, event.message);
        this.parts.costs.feedCost(entry, { type: "message", message: event.message });
        break;
      case "bad-line":
        this.parts.events.appendQuietly(entry, "cli-bad-line", { raw: event.raw, error: event.error });
        break;
      case "stderr":
        this.parts.events.appendQuietly(entry, "stderr", { text: event.text });
        break;
      case "process": {
        const { type: _type, ...fields } = event;
        this.parts.events.appendQuietly(entry, "process", fields);
        entry.pid = event.phase === "spawned" ? event.pid : null;
        this.parts.rows.persistRow(entry);
        if (event.phase === "spawned") {
          // Before any stdout line of this child: the reducer must know a resume resets the counters.
          this.parts.costs.feedCost(
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
        // Ended for good: why, in the log, where every viewer (and a later page load) reads it.
        if (event.state.status === "dead" && entry.status !== "dead")
          this.parts.events.appendQuietly(entry, "process", { phase: "dead", reason: event.state.reason });
        this.applyState(entry, event.state);
        // ended for good: the session is free for any node
        if (event.state.status === "dead") void this.deps.leases?.release(entry.id);
        break;
    }
  }


  /** The turn is over: its after-snapshot is taken, and its changes logged as a `changes` event. */
  endTurnSnapshot(entry: SessionEntry): void {
    this.deps.turnSnapshots?.turnEnded(entry.id, (payload) => {
      if (!this.parts.isClosed()) this.parts.events.appendQuietly(entry, "changes", payload);
    });
  }


  private appendLine(entry: SessionEntry, raw: string, message: CliMessage): void {
    this.parts.events.appendRaw(entry, "cli", raw, wirePayloadOf(raw, message));
    if (message.type === "result") {
      this.endTurnSnapshot(entry);
      entry.conversationStarted = true;
      countResult(entry, message);
      if (typeof message.result === "string" && message.result) this.parts.history.indexText(entry, message.result);
    } else if (message.type === "system" && message.subtype === "session_title_changed") {
      entry.title = message.title;
      this.parts.rows.persistRow(entry);
      this.parts.subscriptions.emitStatus(entry);
    }
  }


  private applyState(entry: SessionEntry, state: SessionState): void {
    const mode = state.permissionMode ?? entry.mode;
    const model = state.model ?? entry.model;
    if (state.status === entry.status && mode === entry.mode && model === entry.model) return;
    entry.status = state.status;
    entry.mode = mode;
    entry.model = model;
    this.parts.rows.persistRow(entry);
    this.parts.subscriptions.emitStatus(entry);
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


/** The decider when no approval queue is connected: the CLI must get an answer, and this one says why. */
const denyWithoutQueue: SessionPermissionDecider = async (_session, question) => ({
  behavior: "deny",
  message: `Conduit has no approval queue connected, so ${question.request.tool_name} was not allowed. Switch the permission mode (acceptEdits lets edits through) or ask the operator to enable approvals.`,
});
