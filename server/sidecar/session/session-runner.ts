/**
 * The session runner: one per live session, between the CLI child and everything above it.
 *
 * It spawns the child through the process layer, turns its stdout into decoded messages, reports
 * every line as a {@link RunnerEvent} before anything else happens with it, feeds the pure
 * session-state reducer, routes control messages to the {@link ControlChannel}, and supervises:
 * crash → restart with `--resume` (budget, backoff) → dead; silence during a turn → stalled; idle
 * → culled and resumed on the next prompt; stop by escalation.
 *
 * Decisions worth knowing:
 * - A resume the CLI answers with "No conversation found" makes the session `dead` with a reason
 *   that says so. It is never replaced by a fresh conversation: the event log, the cost ledger
 *   and the people watching would take the new conversation for the old one.
 * - A respawn resumes only when the CLI's transcript exists; before the first turn reaches the
 *   model the CLI has saved nothing, and the child is started again with `--session-id <same id>`
 *   (nothing of the conversation existed to lose; the prompt in flight is reported in
 *   `crashed.lostPromptUuids`).
 * - A restart keeps the admission slot of the crashed child; a stop, a cull or death frees it.
 * - The turn ends at `result`, never at a process exit: a child that lingers after its result
 *   does not keep the session `running`.
 */
import { ControlChannel, type ControlChannelEvent } from "@/server/shared/claude-protocol/control-channel";
import { decodeLine } from "@/server/shared/claude-protocol/decode-line";
import {
  encodeUserMessage,
  ZPermissionMode,
  type HostControlRequest,
  type UserContentBlock,
} from "@/server/shared/claude-protocol/encode";
import { LineFramer, LineTooLongError, type FramedLine } from "@/server/shared/claude-protocol/line-framer";
import type { CanUseToolRequest, CliMessage, PermissionMode } from "@/server/shared/claude-protocol/messages";
import type { PermissionDecision } from "@/server/shared/claude-protocol/encode";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import {
  createSessionState,
  reduceSessionState,
  type SessionEvent,
  type SessionState,
} from "@/server/domain/session/session-state";
import { admissionRefusalOf, type Admission, type AdmissionLease, type AdmissionRefusal } from "@/server/sidecar/process/admission";
import { buildCliArgs, isModelName } from "@/server/sidecar/process/build-cli-args";
import { buildCliEnv, isRunningAsRoot } from "@/server/sidecar/process/build-cli-env";
import { claudeTranscriptExists } from "@/server/sidecar/process/claude-transcript-exists";
import { grantCliProjectTrust, revokeCliProjectGrants } from "@/server/sidecar/process/cli-config-guard";
import {
  CliPipeError,
  globalTimers,
  spawnCliProcess,
  type CliExit,
  type CliProcess,
  type KillGroup,
  type SpawnFunction,
  type Timers,
} from "@/server/sidecar/process/cli-process";
import { noSandbox, type CliSandbox } from "@/server/sidecar/process/sandbox";
import { oomExitReason, type SessionCgroup, type SessionConfinement } from "@/server/sidecar/process/session-cgroup";
import type { SessionCredential } from "@/server/sidecar/credential-proxy/credential-proxy";
import { openNetwork } from "@/server/domain/workspace/network-policy";
import { rememberBounded } from "./command-memo";
import { writeSpawnMcpConfig, type SpawnMcpConfig } from "./mcp-config";
import { attachSpawnNetwork, sandboxNetworkOf, type NetworkAttachment, type SessionNetwork } from "@/server/sidecar/network/session-network";
import {
  defaultSupervisorConfig,
  restartDelayMs,
  type SupervisorConfig,
} from "@/server/sidecar/process/supervisor-config";
import type {
  PermissionDecider,
  PromptInput,
  RunnerEvent,
  SessionRunner,
  SessionRunnerOptions,
} from "./session-runner-contract";

/** Time and timers; injected so tests run on fake timers and a disposed runner leaves none. */
export interface Clock extends Timers {
  now(): number;
}

/** The logger calls the runner makes (pino's `Logger` fits). Every call carries the session id. */
export interface RunnerLogger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** What a runner is built from, besides its options. */
export interface SessionRunnerDeps {
  /** The `claude` executable (resolveClaudeBinary()), or a fake CLI in tests. */
  cliPath: string;
  /** Answers `can_use_tool`; the runner writes its decision to the CLI. */
  decidePermission: PermissionDecider;
  /** Where the allow-listed variables are read; default `process.env`. */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  /** Variables added as they are (tests: `CLAUDE_CODE_MAX_RETRIES`). */
  extraEnv?: Readonly<Record<string, string>>;
  /** Prefix of the argv, for a CLI run through an interpreter (the fake CLI: `[script, mode]`). */
  argsPrefix?: readonly string[];
  /** Shared admission control; default admits every child. */
  admission?: Admission;
  /**
   * Asked when admission refuses this child (`reason`: which cap): stops an idle child to make
   * room, and says whether it did (the hub picks one of the same person's sessions, or one idle
   * past the cull time: `pickReclaimVictim`). Default: none, the refusal stands.
   */
  reclaimSlot?: (forSessionId: string, reason: AdmissionRefusal) => Promise<boolean>;
  /**
   * Asked before every spawn, before a slot is taken: throws (AppError `unavailable`) when this
   * session may not start a CLI now (`isolation-policy.ts`: no sandbox on a shared instance).
   */
  beforeSpawn?: (sessionId: string) => Promise<void>;
  /** Thresholds; default {@link defaultSupervisorConfig}. */
  config?: Partial<SupervisorConfig>;
  spawn?: SpawnFunction;
  killGroup?: KillGroup;
  clock?: Clock;
  logger?: RunnerLogger;
  /** Default: whether this process runs as root (IS_SANDBOX=1 is set only for root with bypass allowed). */
  isRoot?: boolean;
  /** Default: looks for the CLI's transcript under the config dir. */
  transcriptExists?: (configDir: string, claudeSessionId: string) => boolean | Promise<boolean>;
  /**
   * Before every spawn, the config dir's `.claude.json` is told what Conduit decided: the project at
   * `trustedRoot` trusted, or (null) no grant a session wrote itself. Default: the config guard,
   * through the config dir's workspace door (`cli-config-guard.ts`).
   */
  guardCliConfig?: (configDir: string, trustedRoot: string | null) => Promise<void>;
  /** Where each child runs (bubblewrap); default none. */
  sandbox?: CliSandbox;
  /** The credential proxy: each spawn gets its own token, revoked when that child ends. Default: the env's own key. */
  credentials?: { issue(sessionId: string): SessionCredential };
  /** Narrowed networks (`none`, `allowlist`); without it a narrowed workspace's spawn is refused. */
  network?: SessionNetwork;
  /** Where each spawn's private `--mcp-config` directory goes (`mcp-config.ts`); default the OS temp dir. */
  mcpRunRoot?: string;
  /** Each child in cgroups of its own, or under rlimits, with a memory and process cap (`session-cgroup.ts`, `session-rlimit.ts`); default none. */
  cgroups?: SessionConfinement;
}

/** The config guard's default: grant or revoke through the config dir's door. */
async function guardCliConfig(configDir: string, trustedRoot: string | null): Promise<void> {
  if (trustedRoot !== null) await grantCliProjectTrust(configDir, trustedRoot);
  else await revokeCliProjectGrants(configDir);
}

const systemClock: Clock = { now: () => Date.now(), ...globalTimers };

const silentLogger: RunnerLogger = { debug() {}, info() {}, warn() {}, error() {} };

const admitEverything: Admission = {
  liveCount: 0,
  admit: () => ({ release() {} }),
};

/** Subagents remembered per process (the oldest forgotten first). */
const maxRememberedSubagents = 200;
/** ExitPlanMode calls whose streamed plan is kept until the CLI asks about them. */
const maxRememberedPlans = 20;
/** A longer streamed plan is cut (the card shows the start and says so). */
const maxStreamedPlanChars = 200_000;

/** What one spawn is made of (`prepareSpawn`). */
interface PreparedSpawn {
  resume: boolean;
  args: string[];
  mcp: Awaited<ReturnType<typeof writeSpawnMcpConfig>>;
  network: NetworkAttachment | undefined;
  credential: SessionCredential | undefined;
  env: ReturnType<typeof buildCliEnv>;
}

const NO_CONVERSATION = /No conversation found with session ID/i;
/** How often a watched idle child is asked about again (at most): its last viewer may have left. */
const maxWatchedRecheckMs = 60_000;
// `--session-id` for a conversation the CLI already saved: the next spawn must resume it.
const ALREADY_IN_USE = /Session ID \S+ is already in use/i;

/** Creates the runner of one session; nothing is spawned until `start()` or `prompt()`. */
export function createSessionRunner(options: SessionRunnerOptions, deps: SessionRunnerDeps): SessionRunner {
  return new SupervisedSessionRunner(options, deps);
}

/** One child's worth of protocol state; a respawn gets a fresh one, so nothing carries over. */
interface Generation {
  framer: LineFramer;
  channel: ControlChannel;
  process: CliProcess | undefined;
  /** The child's proxy token; revoked when the child ends or fails to start. */
  credential: SessionCredential | undefined;
  /** The child's narrowed network; closed when the child ends or fails to start. */
  network: NetworkAttachment | undefined;
  /** The child's `--mcp-config` file; removed when the child ends or fails to start. */
  mcp: SpawnMcpConfig | undefined;
  /** The child's cgroups; emptied and removed when the child ends or fails to start. */
  cgroup?: SessionCgroup | undefined;
}

class SupervisedSessionRunner implements SessionRunner {
  readonly sessionId: string;

  private readonly options: SessionRunnerOptions;
  private readonly deps: SessionRunnerDeps;
  private readonly config: SupervisorConfig;
  private readonly clock: Clock;
  private readonly log: RunnerLogger;
  private readonly admission: Admission;
  private currentState: SessionState;
  private readonly listeners: Array<(event: RunnerEvent) => void> = [];
  private readonly queue: RunnerEvent[] = [];
  private emitting = false;

  private current: Generation | undefined;
  private lease: AdmissionLease | undefined;
  private spawning: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private disposing: Promise<void> | undefined;
  private restartTimer: unknown;
  private stallTimer: unknown;
  private cullTimer: unknown;

  /** The conversation to resume: the latest id the CLI reported. */
  private conversationId: string;
  /** The CLI has reported a finished turn (or the caller said so): its transcript must exist. */
  private conversationSaved: boolean;
  private missingConversation: string | undefined;
  private permissionMode: PermissionMode;
  /** The subagents this process started (task id = the agent_id of their questions) and their task's description. */
  private readonly subagents = new Map<string, string | null>();
  /** ExitPlanMode calls' `plan` as the model streamed them, by tool_use id (the CLI's request may carry none). */
  private readonly streamedPlans = new Map<string, string>();
  private model: string | undefined;

  constructor(options: SessionRunnerOptions, deps: SessionRunnerDeps) {
    this.options = options;
    this.deps = deps;
    this.sessionId = options.sessionId;
    this.config = { ...defaultSupervisorConfig, ...deps.config };
    this.clock = deps.clock ?? systemClock;
    this.log = deps.logger ?? silentLogger;
    this.admission = deps.admission ?? admitEverything;
    this.currentState = createSessionState(this.clock.now());
    this.conversationId = options.claudeSessionId;
    this.conversationSaved = options.resume;
    this.permissionMode = options.permissionMode;
    this.model = options.model;
  }

  get state(): SessionState {
    return this.currentState;
  }

  onDidEvent(listener: (event: RunnerEvent) => void): () => void {
    this.listeners.push(listener);
    return () => {
      const index = this.listeners.indexOf(listener);
      if (index !== -1) this.listeners.splice(index, 1);
    };
  }

  async start(): Promise<void> {
    this.assertUsable();
    await this.ensureLive();
  }

  async prompt(input: PromptInput): Promise<void> {
    this.assertUsable();
    // Encoded first: a prompt the CLI would die of is refused before anything is spawned.
    const line = encodeUserMessage({ uuid: input.uuid, content: promptContent(input) });
    await this.ensureLive();
    this.write(line);
    this.apply({ type: "prompt-sent", uuid: input.uuid });
  }

  async interrupt(): Promise<void> {
    this.assertUsable();
    const generation = this.liveGeneration();
    // No child, nothing running: an interrupt has nothing to stop (the CLI answers the same when idle).
    if (generation === undefined) return;
    await generation.channel.request({ subtype: "interrupt" });
  }

  async setPermissionMode(mode: PermissionMode): Promise<PermissionMode> {
    this.assertUsable();
    const generation = this.liveGeneration();
    if (generation === undefined) {
      const parsed = ZPermissionMode.safeParse(mode);
      if (!parsed.success) throw new AppError(ErrorCode.invalidPayload, `Unknown permission mode: ${String(mode)}`);
      if (parsed.data === "bypassPermissions" && this.options.allowBypass !== true) {
        throw new AppError(ErrorCode.forbidden, "bypassPermissions needs the workspace to allow bypass");
      }
      // Applied by the next spawn (`--permission-mode`), which is the only place it can go.
      this.permissionMode = parsed.data;
      return parsed.data;
    }
    // An unknown mode is an EncodeError from the encoder (nothing written); a refused one a ControlRequestError.
    const response = await generation.channel.request({ subtype: "set_permission_mode", mode });
    const confirmed = ZPermissionMode.safeParse(response.mode);
    if (!confirmed.success) {
      throw new AppError(
        ErrorCode.cliError,
        `The CLI did not confirm the permission mode (answered ${JSON.stringify(response)})`,
      );
    }
    this.permissionMode = confirmed.data;
    return confirmed.data;
  }

  async setModel(model: string | undefined): Promise<string> {
    this.assertUsable();
    const generation = this.liveGeneration();
    if (generation === undefined) {
      if (model !== undefined && !isModelName(model)) {
        throw new AppError(ErrorCode.invalidPayload, `Not a model name: ${model}`);
      }
      this.model = model;
      return model ?? "default";
    }
    const response = await generation.channel.request(
      model === undefined ? { subtype: "set_model" } : { subtype: "set_model", model },
    );
    this.model = model;
    return typeof response.model === "string" ? response.model : (model ?? "default");
  }

  async control(request: HostControlRequest): Promise<Record<string, unknown>> {
    this.assertUsable();
    const generation = this.liveGeneration();
    if (generation === undefined) {
      throw new AppError(ErrorCode.conflict, "This session's CLI is not running; send a prompt to start it.");
    }
    return generation.channel.request(request);
  }

  stop(): Promise<void> {
    this.stopping ??= this.stopChild().finally(() => {
      this.stopping = undefined;
    });
    return this.stopping;
  }

  dispose(): Promise<void> {
    this.disposing ??= (async () => {
      await this.stop();
      this.clearTimers();
      this.listeners.length = 0;
    })();
    return this.disposing;
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  private assertUsable(): void {
    if (this.disposing !== undefined) {
      throw new AppError(ErrorCode.conflict, `Session ${this.sessionId} has been closed on this server`);
    }
  }

  // A method, not an inline comparison: the state changes across the awaits of ensureLive.
  private isDead(): boolean {
    return this.currentState.status === "dead";
  }

  private deadError(): AppError {
    const reason = this.currentState.status === "dead" ? this.currentState.reason : "dead";
    return new AppError(ErrorCode.conflict, `This session has ended and takes no more prompts: ${reason}`);
  }

  private liveGeneration(): Generation | undefined {
    const generation = this.current;
    return generation?.process?.running === true && this.stopping === undefined ? generation : undefined;
  }

  /** Makes sure a child runs: waits for a stop or spawn in progress, resumes a stopped child. */
  private async ensureLive(): Promise<void> {
    if (this.isDead()) throw this.deadError();
    if (this.stopping !== undefined) await this.stopping;
    if (this.spawning === undefined) {
      if (this.current?.process?.running === true) return;
      if (this.isDead()) throw this.deadError();
      // A person is waiting: a scheduled restart happens now instead of after its backoff.
      this.cancelRestart();
      this.spawning = this.spawnChild().finally(() => {
        this.spawning = undefined;
      });
    }
    await this.spawning;
    if (this.current?.process?.running !== true) {
      if (this.isDead()) throw this.deadError();
      throw new AppError(ErrorCode.unavailable, "The Claude CLI exited right after it started; try again.");
    }
  }

  private spawnArgsInput(resume: boolean) {
    return {
      claudeSessionId: this.conversationId,
      resume,
      permissionMode: this.permissionMode,
      model: this.model,
      includePartialMessages: this.options.includePartialMessages,
      allowBypass: this.options.allowBypass,
      maxBudgetUsd: this.options.maxBudgetUsd,
      workspaceSettings: this.options.workspaceSettings,
    };
  }

  /**
   * A slot for this child; when a cap refuses it, an idle child the rules allow is stopped to make
   * room (a few times at most: freeing one cap may meet the next). Every refusal is logged.
   */
  private async admitChild(): Promise<AdmissionLease> {
    for (let attempt = 0; ; attempt++) {
      try {
        return this.admission.admit(this.sessionId);
      } catch (err) {
        const reason = admissionRefusalOf(err);
        const reclaimed = reason !== undefined && attempt < 3 && this.deps.reclaimSlot !== undefined && (await this.deps.reclaimSlot(this.sessionId, reason));
        if (!reclaimed) {
          this.log.warn({ sessionId: this.sessionId, reason: reason ?? "other", err }, "CLI start refused by admission");
          throw err;
        }
        this.log.info({ sessionId: this.sessionId, reason }, "an idle session's CLI was stopped to make room for this one");
      }
    }
  }

  /** What a spawn needs, read fresh: flags, the MCP config, the network, a credential and the environment. */
  private async prepareSpawn(): Promise<PreparedSpawn> {
    const transcriptExists = this.deps.transcriptExists ?? claudeTranscriptExists;
    const resume = this.conversationSaved || (await transcriptExists(this.options.configDir, this.conversationId));
    const trusted =
      this.options.workspaceSettings === "trusted" || (await (this.options.settingsTrusted?.() ?? Promise.resolve(false)).catch(() => false));
    const args = [...(this.deps.argsPrefix ?? []), ...buildCliArgs({ ...this.spawnArgsInput(resume), workspaceSettings: trusted ? "trusted" : "untrusted" })];
    // A session can write its config dir: trust it may have granted itself is taken back first,
    // and an owner's trust is written in the form the CLI reads (it ignores settings.json allow
    // rules in a project it has not trusted).
    await (this.deps.guardCliConfig ?? guardCliConfig)(this.options.configDir, trusted ? (this.options.cwd ?? this.options.workspaceRoot) : null);
    // The workspace's MCP servers, read fresh too (mcp-config.ts).
    const mcp = await writeSpawnMcpConfig((await this.options.mcpServers?.()) ?? [], { trusted, runRoot: this.deps.mcpRunRoot });
    args.push(...(mcp?.args ?? []));
    // Read fresh before every spawn (an owner narrows at any time); refused rather than run open.
    let network: NetworkAttachment | undefined;
    try {
      const policy = (await this.options.networkPolicy?.()) ?? openNetwork;
      network = await attachSpawnNetwork(this.sessionId, policy, this.deps.sandbox ?? noSandbox, this.deps.network);
    } catch (err) {
      await mcp?.remove();
      throw err;
    }
    const credential = this.deps.credentials?.issue(this.sessionId);
    const env = buildCliEnv({
      baseEnv: this.deps.baseEnv ?? process.env,
      configDir: this.options.configDir,
      allowBypass: this.options.allowBypass,
      isRoot: this.deps.isRoot ?? isRunningAsRoot(),
      extraEnv: { ...this.deps.extraEnv, ...network?.env },
      credentials: credential?.env,
    });
    return { resume, args, mcp, network, credential, env };
  }

  private async spawnChild(): Promise<void> {
    // May this session start a CLI at all (isolation policy)? Asked first: a refusal takes no slot.
    await this.deps.beforeSpawn?.(this.sessionId);
    // A slot first, so that a refusal leaves nothing to undo (an MCP config, a network, a credential).
    const newLease = this.lease === undefined;
    if (newLease) this.lease = await this.admitChild();
    let prepared: PreparedSpawn;
    try {
      prepared = await this.prepareSpawn();
    } catch (err) {
      if (newLease) this.releaseLease();
      throw err;
    }
    const { resume, args, mcp, network, credential, env } = prepared;
    this.missingConversation = undefined;

    const generation: Generation = {
      framer: new LineFramer({ maxLineBytes: this.config.maxLineBytes }),
      channel: this.createChannel(() => generation),
      process: undefined,
      credential,
      network,
      mcp,
    };
    this.current = generation;
    let child: CliProcess;
    try {
      const launch = (this.deps.sandbox ?? noSandbox).wrap(
        { file: this.deps.cliPath, args, cwd: this.options.cwd ?? this.options.workspaceRoot, env },
        {
          workspaceRoot: this.options.workspaceRoot,
          configDir: this.options.configDir,
          ...(this.options.cwd !== undefined ? { cwd: this.options.cwd } : {}),
          ...(mcp !== undefined ? { readOnly: [mcp.dir] } : {}),
        },
        sandboxNetworkOf(network),
      );
      generation.cgroup = await this.deps.cgroups?.create(this.sessionId);
      const started = generation.cgroup?.wrap(launch) ?? launch;
      child = await spawnCliProcess({
        cliPath: started.file,
        args: started.args,
        cwd: started.cwd,
        env: started.env,
        config: this.config,
        spawn: this.deps.spawn,
        killGroup: this.deps.killGroup,
        timers: this.clock,
        onStdout: (chunk) => {
          if (this.current === generation) this.onFramedLines(generation, generation.framer.push(chunk));
        },
        onStderrLine: (text) => this.onStderrLine(generation, text),
        onExit: (exit) => this.onExit(generation, exit),
      });
    } catch (error) {
      credential?.revoke();
      void network?.close();
      void mcp?.remove();
      void generation.cgroup?.destroy();
      if (this.current === generation) this.current = undefined;
      generation.channel.close("the CLI did not start");
      if (newLease) this.releaseLease();
      this.log.error({ sessionId: this.sessionId, err: error }, "claude CLI could not be started");
      throw error;
    }
    generation.process = child;
    this.log.info(
      { sessionId: this.sessionId, pid: child.pid, claudeSessionId: this.conversationId, resumed: resume },
      "claude CLI started",
    );
    this.emit({ type: "process", phase: "spawned", pid: child.pid, resumed: resume });
    this.apply({ type: "process-spawned", claudeSessionId: this.conversationId });
  }

  private createChannel(generation: () => Generation): ControlChannel {
    return new ControlChannel({
      write: (line) => {
        const child = generation().process;
        if (child === undefined) throw new CliPipeError("The CLI is not running");
        child.write(line);
      },
      timers: this.clock,
      requestTimeoutMs: this.config.controlTimeoutMs,
      onCanUseTool: (request, context) => this.askPermission(request, context.requestId, context.signal),
      onEvent: (event) => this.onChannelEvent(event),
    });
  }

  private async stopChild(): Promise<void> {
    // Yield once so that `this.stopping` is set before anything below looks at it.
    await Promise.resolve();
    this.cancelRestart();
    if (this.spawning !== undefined) await this.spawning.catch(() => undefined);
    const child = this.current?.process;
    this.apply({ type: "stop-requested" });
    if (child?.running === true) await child.stop();
    this.releaseLease();
    this.clearTimers();
  }

  private onExit(generation: Generation, exit: CliExit): void {
    // The token dies with its process, whatever happens next.
    generation.credential?.revoke();
    void generation.network?.close();
    void generation.mcp?.remove();
    // Read before the kill empties it: an OOM kill at the cap is reported as such, not as a crash.
    const oom = !exit.expected && this.deps.cgroups ? oomExitReason(exit, generation.cgroup?.facts(), this.deps.cgroups.caps) : undefined;
    void generation.cgroup?.destroy();
    if (this.current !== generation) return;
    // Every line the child printed is delivered before its exit.
    this.onFramedLines(generation, generation.framer.end());
    this.current = undefined;
    this.emit({
      type: "process",
      phase: "exited",
      pid: exit.pid,
      code: exit.code,
      signal: exit.signal,
      expected: exit.expected,
      ...(oom ? { reason: oom } : {}),
    });
    const fields = {
      sessionId: this.sessionId,
      pid: exit.pid,
      code: exit.code,
      signal: exit.signal,
      cause: oom ?? exit.cause,
    };
    this.apply({ type: "process-exited", code: exit.code, signal: exit.signal, expected: exit.expected });
    // After the exit is in the state: pending approvals are already gone, their aborts change nothing.
    generation.channel.close(`the CLI exited (${describeExit(exit)})`);
    this.clearWatchdogs();

    if (this.missingConversation !== undefined) {
      this.log.error({ ...fields, configDir: this.options.configDir }, "claude CLI has no conversation to resume; session is dead");
      this.die(this.missingConversation);
      return;
    }
    if (exit.expected || this.currentState.status === "stopped") {
      this.log.info(fields, "claude CLI stopped");
      return;
    }
    this.log.warn(fields, "claude CLI crashed");
    if (this.disposing !== undefined) return;
    if (this.currentState.consecutiveRestarts >= this.config.maxRestarts) {
      this.apply({ type: "restart-budget-exhausted" });
      this.releaseLease();
      this.log.error(fields, "claude CLI restart budget exhausted; session is dead");
      return;
    }
    const delayMs = restartDelayMs(this.currentState.consecutiveRestarts + 1, this.config);
    this.apply({ type: "restart-scheduled", delayMs });
    this.restartTimer = this.clock.setTimeout(() => this.restart(), delayMs);
  }

  private restart(): void {
    this.restartTimer = undefined;
    if (this.spawning !== undefined || this.stopping !== undefined || this.disposing !== undefined) return;
    if (this.currentState.status !== "starting") return;
    this.spawning = this.spawnChild()
      .catch((error: unknown) => {
        this.die(`the CLI could not be restarted: ${error instanceof Error ? error.message : String(error)}`);
      })
      .finally(() => {
        this.spawning = undefined;
      });
  }

  /** Ends the session for good with `reason`, through the reducer's own transition to `dead`. */
  private die(reason: string): void {
    const now = this.clock.now();
    const state = this.currentState;
    if (state.status !== "dead") {
      const dead = reduceSessionState(state, { type: "restart-budget-exhausted" }, now);
      this.setState(dead.status === "dead" ? { ...dead, reason } : deadFrom(state, reason, now));
    }
    this.cancelRestart();
    this.releaseLease();
  }

  private releaseLease(): void {
    this.lease?.release();
    this.lease = undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // Output

  private onFramedLines(generation: Generation, lines: FramedLine[]): void {
    for (const framed of lines) {
      if (framed instanceof LineTooLongError) {
        this.log.warn(
          { sessionId: this.sessionId, limit: framed.limit, seen: framed.seen },
          "claude CLI printed an oversized line",
        );
        this.emit({ type: "bad-line", raw: "", error: framed.message });
        continue;
      }
      const decoded = decodeLine(framed);
      if (!decoded.ok) {
        this.log.warn(
          { sessionId: this.sessionId, error: decoded.error.message, raw: framed.slice(0, 500) },
          "claude CLI printed a line that is not protocol",
        );
        this.emit({ type: "bad-line", raw: framed, error: decoded.error.message });
        continue;
      }
      const message = decoded.message;
      this.emit({ type: "line", raw: framed, message });
      this.observe(message);
      this.apply({ type: "message", message });
      if (
        message.type === "control_request" ||
        message.type === "control_response" ||
        message.type === "control_cancel_request"
      ) {
        generation.channel.receive(message);
      } else if (message.type === "unknown") {
        this.log.debug(
          { sessionId: this.sessionId, type: message.originalType, subtype: message.originalSubtype },
          "unknown CLI message kept",
        );
      }
    }
  }

  /** Tracks what a respawn needs: the conversation id, whether it is saved, and the mode. */
  private observe(message: CliMessage): void {
    if (message.type === "assistant") {
      for (const block of message.message.content ?? []) {
        if (block.type !== "tool_use" || block.name !== "ExitPlanMode") continue;
        const plan = (block.input as { plan?: unknown } | undefined)?.plan;
        if (typeof plan === "string" && plan.trim() !== "") {
          const kept = plan.length > maxStreamedPlanChars ? `${plan.slice(0, maxStreamedPlanChars)}\n\n… (cut)` : plan;
          rememberBounded(this.streamedPlans, block.id, kept, maxRememberedPlans);
        }
      }
    } else if (message.type === "result") {
      if (message.is_error && message.errors?.some((text) => NO_CONVERSATION.test(text))) {
        this.noteMissingConversation();
        return;
      }
      if (typeof message.session_id === "string" && message.session_id !== "") {
        if (message.session_id !== this.conversationId) {
          this.conversationId = message.session_id;
          this.conversationSaved = false;
        }
        // A turn that reached the model has been written to the transcript; a local command's
        // result (`/clear`: num_turns 0, a new id) proves nothing, the transcript check decides then.
        if (message.num_turns === undefined || message.num_turns > 0) this.conversationSaved = true;
      }
    } else if (message.type === "system") {
      if (message.subtype === "task_started" && message.task_type === "local_agent") {
        // a subagent's task: its permission questions carry its id as agent_id
        rememberBounded(this.subagents, message.task_id, message.description ?? null, maxRememberedSubagents);
      } else if (message.subtype === "init") {
        if (message.session_id !== this.conversationId) {
          // A new id mid-process (/clear, fork) is a new conversation, saved once its turn ends.
          this.conversationId = message.session_id;
          this.conversationSaved = false;
        }
        this.adoptMode(message.permissionMode);
      } else if (message.subtype === "status") {
        this.adoptMode(message.permissionMode);
      }
    }
  }

  private adoptMode(mode: unknown): void {
    const parsed = ZPermissionMode.safeParse(mode);
    if (parsed.success) this.permissionMode = parsed.data;
  }

  private noteMissingConversation(): void {
    // Shown to the session's viewers: no server path (the log line has the config dir).
    this.missingConversation ??=
      `Claude Code has no saved conversation ${this.conversationId} to resume (its transcript is gone: ` +
      `the CLI's config directory was wiped, moved or restored from an older backup), so it cannot continue`;
  }

  private onStderrLine(generation: Generation, text: string): void {
    if (this.current !== generation) return;
    if (NO_CONVERSATION.test(text)) this.noteMissingConversation();
    if (ALREADY_IN_USE.test(text)) this.conversationSaved = true;
    this.log.info({ sessionId: this.sessionId, pid: generation.process?.pid, stderr: text }, "claude CLI stderr");
    this.emit({ type: "stderr", text });
  }

  private onChannelEvent(event: ControlChannelEvent): void {
    const fields: Record<string, unknown> = { sessionId: this.sessionId, ...event };
    if (event.kind === "handler-failed" || event.kind === "write-failed")
      this.log.warn(fields, `control channel: ${event.kind}`);
    else this.log.debug(fields, `control channel: ${event.kind}`);
  }

  // ---------------------------------------------------------------------------------------------
  // Input

  private write(line: string): void {
    const child = this.current?.process;
    if (child === undefined || !child.running) {
      throw new AppError(ErrorCode.unavailable, "The Claude CLI is not running; try again.");
    }
    try {
      child.write(line);
    } catch (error) {
      if (this.stopping !== undefined) throw error;
      // stdin is gone while the process is not: the conversation cannot go on in this child.
      child.kill(`stdin write failed: ${error instanceof Error ? error.message : String(error)}`);
      throw new AppError(ErrorCode.unavailable, "The Claude CLI stopped taking input; it is being restarted.");
    }
  }

  private askPermission(
    request: CanUseToolRequest,
    requestId: string,
    signal: AbortSignal,
  ): Promise<PermissionDecision> {
    this.apply({ type: "approval-requested", requestId, toolName: request.tool_name });
    // A cancel (interrupt) or an exit frees the session at once, whatever the decider does next.
    const onAbort = () => this.apply({ type: "approval-cancelled", requestId });
    signal.addEventListener("abort", onAbort, { once: true });
    let decision: Promise<PermissionDecision>;
    const agentId = request.agent_id;
    const agent = agentId ? { id: agentId, description: this.subagents.get(agentId) ?? null } : undefined;
    const streamedPlan =
      request.tool_name === "ExitPlanMode" && request.tool_use_id ? this.streamedPlans.get(request.tool_use_id) : undefined;
    try {
      decision = Promise.resolve(
        this.deps.decidePermission({ requestId, request, signal, ...(agent ? { agent } : {}), ...(streamedPlan ? { streamedPlan } : {}) }),
      );
    } catch (error) {
      decision = Promise.reject(error);
    }
    return decision.finally(() => {
      signal.removeEventListener("abort", onAbort);
      if (!signal.aborted) this.apply({ type: "approval-resolved", requestId });
    });
  }

  // ---------------------------------------------------------------------------------------------
  // State, events, watchdogs

  private apply(event: SessionEvent): void {
    const next = reduceSessionState(this.currentState, event, this.clock.now());
    if (next !== this.currentState) this.setState(next);
  }

  private setState(next: SessionState): void {
    const previous = this.currentState;
    this.currentState = next;
    if (meaningfullyDifferent(previous, next)) this.emit({ type: "state", state: next });
    this.syncWatchdogs();
  }

  /** Delivers events in order; an event raised by a listener waits until the current one is delivered. */
  private emit(event: RunnerEvent): void {
    this.queue.push(event);
    if (this.emitting) return;
    this.emitting = true;
    try {
      for (let i = 0; i < this.queue.length; i++) {
        const queued = this.queue[i]!;
        for (const listener of [...this.listeners]) {
          try {
            listener(queued);
          } catch (error) {
            this.log.error(
              { sessionId: this.sessionId, err: error, event: queued.type },
              "runner event listener failed",
            );
          }
        }
      }
    } finally {
      this.queue.length = 0;
      this.emitting = false;
    }
  }

  private syncWatchdogs(): void {
    const state = this.currentState;
    const live = this.current?.process?.running === true && this.stopping === undefined;
    if (live && state.status === "running") {
      this.stallTimer ??= this.clock.setTimeout(
        () => this.checkStall(),
        Math.max(0, state.lastActivityAt + this.config.stallMs - this.clock.now()),
      );
    } else if (this.stallTimer !== undefined) {
      this.clock.clearTimeout(this.stallTimer);
      this.stallTimer = undefined;
    }
    if (live && state.status === "idle" && this.config.idleCullMs > 0) {
      this.cullTimer ??= this.clock.setTimeout(
        () => this.checkIdle(),
        Math.max(0, state.lastActivityAt + this.config.idleCullMs - this.clock.now()),
      );
    } else if (this.cullTimer !== undefined) {
      this.clock.clearTimeout(this.cullTimer);
      this.cullTimer = undefined;
    }
  }

  // One timer per watchdog, re-armed for the remaining time when activity moved the deadline:
  // cheaper than resetting a timer on every streamed line.
  private checkStall(): void {
    this.stallTimer = undefined;
    const state = this.currentState;
    if (state.status !== "running") return;
    const due = state.lastActivityAt + this.config.stallMs;
    if (this.clock.now() >= due) {
      this.log.warn(
        { sessionId: this.sessionId, silentMs: this.clock.now() - state.lastActivityAt },
        "claude CLI is silent during a turn",
      );
      this.apply({ type: "silence-watchdog-fired" });
    } else {
      this.syncWatchdogs();
    }
  }

  private checkIdle(): void {
    this.cullTimer = undefined;
    const state = this.currentState;
    if (state.status !== "idle" || state.pendingApprovals.length > 0) return;
    if (this.clock.now() < state.lastActivityAt + this.config.idleCullMs) {
      this.syncWatchdogs();
      return;
    }
    const watched = this.options.watched;
    if (watched === undefined) {
      this.cull(state);
      return;
    }
    // A placeholder timer while the answer comes, so that syncWatchdogs arms no second check.
    const asking = this.clock.setTimeout(() => undefined, 0);
    this.cullTimer = asking;
    void watched()
      .catch((err: unknown) => {
        this.log.warn({ err, sessionId: this.sessionId }, "could not tell whether anyone has the session open; culling it");
        return false;
      })
      .then((open) => {
        // Something happened meanwhile (a prompt, a stop, a new check): that decides, not this answer.
        if (this.cullTimer !== asking) return;
        this.cullTimer = undefined;
        const now = this.currentState;
        if (now !== state && (now.status !== "idle" || now.lastActivityAt !== state.lastActivityAt)) return this.syncWatchdogs();
        if (!open) return this.cull(now);
        // Kept warm for whoever has it open; asked again after a while (the last viewer may leave).
        this.cullTimer = this.clock.setTimeout(() => this.checkIdle(), Math.min(this.config.idleCullMs, maxWatchedRecheckMs));
      });
  }

  private cull(state: SessionState): void {
    this.log.info({ sessionId: this.sessionId, idleMs: this.clock.now() - state.lastActivityAt }, "culling idle claude CLI");
    void this.stop();
  }

  private cancelRestart(): void {
    if (this.restartTimer === undefined) return;
    this.clock.clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }

  private clearWatchdogs(): void {
    if (this.stallTimer !== undefined) this.clock.clearTimeout(this.stallTimer);
    if (this.cullTimer !== undefined) this.clock.clearTimeout(this.cullTimer);
    this.stallTimer = undefined;
    this.cullTimer = undefined;
  }

  private clearTimers(): void {
    this.cancelRestart();
    this.clearWatchdogs();
  }
}

/** A state change worth an event: anything but the activity clock (which moves on every line). */
function meaningfullyDifferent(a: SessionState, b: SessionState): boolean {
  if (a.status !== b.status) return true;
  const left = a as unknown as Record<string, unknown>;
  const right = b as unknown as Record<string, unknown>;
  for (const key in right) {
    if (key !== "lastActivityAt" && left[key] !== right[key]) return true;
  }
  return false;
}

/** The dead state for a status the reducer does not take to `dead` itself (a stopped session). */
function deadFrom(state: SessionState, reason: string, now: number): SessionState {
  const exit = state.status === "stopped" || state.status === "crashed" ? state.exit : null;
  return {
    claudeSessionId: state.claudeSessionId,
    previousClaudeSessionIds: state.previousClaudeSessionIds,
    model: state.model,
    permissionMode: state.permissionMode,
    pendingPrompts: [],
    pendingApprovals: [],
    turn: null,
    lastTurn: state.lastTurn,
    consecutiveRestarts: state.consecutiveRestarts,
    processRunning: false,
    stopRequestedAt: state.stopRequestedAt,
    lastActivityAt: state.lastActivityAt,
    since: now,
    status: "dead",
    exit,
    reason,
  };
}

function describeExit(exit: CliExit): string {
  const status = exit.signal !== null ? `signal ${exit.signal}` : `code ${exit.code}`;
  return exit.cause === undefined ? status : `${status}, ${exit.cause}`;
}

/** A prompt's content: its text alone, or text (when any) then one image block per image. */
function promptContent(input: PromptInput): string | UserContentBlock[] {
  if (!input.images || input.images.length === 0) return input.text;
  const blocks: UserContentBlock[] = [];
  if (input.text.trim()) blocks.push({ type: "text", text: input.text });
  for (const image of input.images) {
    blocks.push({ type: "image", source: { type: "base64", media_type: image.mediaType, data: image.data } });
  }
  return blocks;
}
