// A SessionRunner without a CLI, for the hub's unit tests and the relay benchmark. Its state is
// driven by the real session reducer; lines are decoded by the real decoder, so what the hub
// sees has the shape a real runner produces. Tests script it: `emitLine`, `onPrompt`, refusals.
import {
  createSessionState,
  reduceSessionState,
  type SessionEvent,
  type SessionState,
} from "@/server/domain/session/session-state";
import { decodeLine } from "@/server/shared/claude-protocol/decode-line";
import type { HostControlRequest } from "@/server/shared/claude-protocol/encode";
import type { PermissionMode } from "@/server/shared/claude-protocol/messages";
import type {
  PermissionDecider,
  PromptInput,
  RunnerEvent,
  SessionRunner,
  SessionRunnerOptions,
} from "@/server/sidecar/session/session-runner-contract";

export interface FakeRunnerScript {
  /** Called after a prompt is "written"; emit the turn from here (sync or with timers). */
  onPrompt?: (runner: FakeSessionRunner, input: PromptInput) => void;
  /** start() rejects with this. */
  startError?: Error;
  /** setPermissionMode() rejects with this. */
  modeError?: Error;
  /** Delay before prompt() resolves (to test retries in flight). */
  promptDelayMs?: number;
  /** prompt() rejects with this (the prompt never reaches the CLI). */
  promptError?: Error;
  /** Answers control() requests. */
  control?: (request: HostControlRequest) => Record<string, unknown>;
}

let nextPid = 40_000;

/** A runner whose CLI is the test. */
export class FakeSessionRunner implements SessionRunner {
  readonly sessionId: string;
  state: SessionState;
  readonly prompts: PromptInput[] = [];
  readonly modes: string[] = [];
  readonly models: (string | undefined)[] = [];
  /** The permission mode a child runs in (options, then each confirmed change). */
  mode: string;
  interrupts = 0;
  stops = 0;
  disposed = false;
  private readonly listeners = new Set<(event: RunnerEvent) => void>();
  private pid = 0;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    readonly options: SessionRunnerOptions,
    private readonly script: FakeRunnerScript = {},
    /** The hub's decider, for tests that play a `can_use_tool` question. */
    readonly decidePermission?: PermissionDecider,
  ) {
    this.sessionId = options.sessionId;
    this.state = createSessionState(Date.now());
    this.mode = options.permissionMode;
  }

  async start(): Promise<void> {
    if (this.script.startError) throw this.script.startError;
    this.spawn();
  }

  async prompt(input: PromptInput): Promise<void> {
    if (!this.state.processRunning) this.spawn();
    if (this.script.promptDelayMs)
      await new Promise<void>((r) => this.later(() => r(), this.script.promptDelayMs ?? 0));
    if (this.script.promptError) throw this.script.promptError;
    this.prompts.push(input);
    this.reduce({ type: "prompt-sent", uuid: input.uuid });
    this.script.onPrompt?.(this, input);
  }

  async interrupt(): Promise<void> {
    this.interrupts += 1;
  }

  async setPermissionMode(mode: PermissionMode): Promise<PermissionMode> {
    if (this.script.modeError) throw this.script.modeError;
    this.modes.push(mode);
    this.mode = mode;
    return mode;
  }

  async setModel(model: string | undefined): Promise<string> {
    this.models.push(model);
    return model ?? "default";
  }

  /** Control requests the hub sent, in order; answered by `script.control` (default `{}`). */
  readonly controls: HostControlRequest[] = [];

  async control(request: HostControlRequest): Promise<Record<string, unknown>> {
    this.controls.push(request);
    return this.script.control?.(request) ?? {};
  }

  async stop(): Promise<void> {
    this.stops += 1;
    this.reduce({ type: "stop-requested" });
    if (this.state.processRunning) this.exit(true);
  }

  onDidEvent(listener: (event: RunnerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async dispose(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (this.state.processRunning) this.exit(true);
    this.disposed = true;
  }

  /** Emits one stdout line (an object, serialized as the CLI would). */
  emitLine(message: Record<string, unknown>): void {
    const raw = JSON.stringify(message);
    const decoded = decodeLine(raw);
    if (!decoded.ok) {
      this.emit({ type: "bad-line", raw, error: decoded.error.message });
      return;
    }
    this.emit({ type: "line", raw, message: decoded.message });
    this.reduce({ type: "message", message: decoded.message });
  }

  /** Emits any runner event as is. */
  emit(event: RunnerEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** A timer cleared by dispose(). */
  later(fn: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  /** The process ends (a crash unless `expected`). */
  exit(expected: boolean): void {
    this.emit({ type: "process", phase: "exited", pid: this.pid, code: expected ? 0 : 1, signal: null, expected });
    this.reduce({ type: "process-exited", code: expected ? 0 : 1, signal: null, expected });
  }

  private spawn(): void {
    this.pid = nextPid++;
    this.emit({ type: "process", phase: "spawned", pid: this.pid, resumed: this.options.resume });
    this.reduce({ type: "process-spawned", claudeSessionId: this.options.claudeSessionId });
  }

  private reduce(event: SessionEvent): void {
    const next = reduceSessionState(this.state, event, Date.now());
    if (next === this.state) return;
    this.state = next;
    this.emit({ type: "state", state: next });
  }
}

/** A whole small turn, as the CLI prints it: init, assistant text, result. */
export function emitTurn(
  runner: FakeSessionRunner,
  input: { uuid: string },
  text: string,
  options: { sessionId?: string; usage?: Record<string, number> } = {},
): void {
  const session_id = options.sessionId ?? runner.options.claudeSessionId;
  runner.emitLine({
    type: "system",
    subtype: "init",
    session_id,
    model: "claude-test",
    permissionMode: runner.mode,
    uuid: crypto.randomUUID(),
  });
  runner.emitLine({
    type: "assistant",
    message: { role: "assistant", content: [{ type: "text", text }] },
    parent_tool_use_id: null,
    session_id,
    uuid: crypto.randomUUID(),
  });
  runner.emitLine({
    type: "result",
    subtype: "success",
    is_error: false,
    result: text,
    session_id,
    uuid: crypto.randomUUID(),
    user_message_uuids: [input.uuid],
    usage: options.usage ?? {
      input_tokens: 10,
      output_tokens: 5,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    },
  });
}

/** A runner factory that keeps every runner it made. */
export function fakeRunnerFactory(script: FakeRunnerScript = {}): {
  create: (options: SessionRunnerOptions, decidePermission: PermissionDecider) => FakeSessionRunner;
  runners: FakeSessionRunner[];
} {
  const runners: FakeSessionRunner[] = [];
  return {
    runners,
    create: (options, decidePermission) => {
      const runner = new FakeSessionRunner(options, script, decidePermission);
      runners.push(runner);
      return runner;
    },
  };
}
