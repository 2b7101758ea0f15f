/**
 * One `claude` child: spawned without a shell in its own process group, its pipes watched, its
 * end reported once, and stopped by escalation (stdin closed → SIGTERM to the group → SIGKILL to
 * the group). What the bytes mean is the session runner's business; this layer moves them.
 */
import { spawn as nodeSpawn } from "node:child_process";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { SupervisorConfig } from "./supervisor-config";

/** The writable end of the child's stdin, as far as this module uses it. */
export interface ChildStdin {
  write(chunk: string): boolean;
  end(): void;
  readonly destroyed: boolean;
  readonly writableEnded: boolean;
  on(event: "error", listener: (error: Error) => void): unknown;
}

/** A readable pipe of the child (stdout, stderr). */
export interface ChildReadable {
  on(event: "data", listener: (chunk: Uint8Array | string) => void): unknown;
  on(event: "close", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
}

/** What {@link SpawnFunction} returns: the parts of Node's `ChildProcess` the supervisor relies on. */
export interface ChildLike {
  readonly pid?: number | undefined;
  readonly stdin: ChildStdin;
  readonly stdout: ChildReadable;
  readonly stderr: ChildReadable;
  once(event: "spawn", listener: () => void): unknown;
  once(event: "error", listener: (error: Error) => void): unknown;
  once(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
}

/** Starts a child; injected so that tests use a fake process. */
export type SpawnFunction = (
  file: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string> },
) => ChildLike;

/** Sends `signal` to every process of group `pgid`; a group that is gone is not an error. */
export type KillGroup = (pgid: number, signal: NodeJS.Signals) => void;

/** Timer functions (injected: fake timers in tests, and nothing left behind after the exit). */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The global timers, looked up at call time so that test fake timers apply. */
export const globalTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Node's spawn with what DESIGN rule 1 asks: an argv array and no shell, a process group of its
 * own (`detached`, so that signals reach the shells the Bash tool starts), nothing inherited
 * but the environment given.
 */
export const spawnDetached: SpawnFunction = (file, args, options) =>
  nodeSpawn(file, [...args], {
    cwd: options.cwd,
    // Next's types make NODE_ENV mandatory on ProcessEnv; the child gets exactly this record.
    env: options.env as NodeJS.ProcessEnv,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
    shell: false,
    windowsHide: true,
  });

/** `process.kill(-pgid, signal)`, ignoring a group that no longer exists. */
export const killProcessGroup: KillGroup = (pgid, signal) => {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
};

/** The executable could not be started (not found, not executable, bad cwd). */
export class CliSpawnError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.unavailable, message, options?.cause);
    this.name = "CliSpawnError";
  }
}

/** A write to a child whose stdin is closed or broken. */
export class CliPipeError extends AppError {
  constructor(message: string) {
    super(ErrorCode.unavailable, message);
    this.name = "CliPipeError";
  }
}

/** How a child ended. */
export interface CliExit {
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Asked for through `stop()`; false is a crash. */
  expected: boolean;
  /** What went wrong when the supervisor knows more than the exit status (a broken pipe). */
  cause?: string;
}

/** Callbacks of one child; all are called synchronously from the pipe and process events. */
export interface CliProcessHandlers {
  onStdout(chunk: Uint8Array): void;
  onStderrLine(line: string): void;
  /** Called once, after the exit and after stdout and stderr closed (or `exitDrainMs` passed). */
  onExit(exit: CliExit): void;
}

/** Everything needed to start a child. */
export interface CliProcessOptions extends CliProcessHandlers {
  cliPath: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  config: Pick<SupervisorConfig, "stdinGraceMs" | "termGraceMs" | "killWaitMs" | "exitDrainMs" | "maxStderrLineBytes">;
  spawn?: SpawnFunction | undefined;
  killGroup?: KillGroup | undefined;
  timers?: Timers | undefined;
}

/** Starts a child and resolves once it runs; rejects with {@link CliSpawnError} when it cannot start. */
export function spawnCliProcess(options: CliProcessOptions): Promise<CliProcess> {
  const spawn = options.spawn ?? spawnDetached;
  let child: ChildLike;
  try {
    child = spawn(options.cliPath, options.args, { cwd: options.cwd, env: options.env });
  } catch (error) {
    return Promise.reject(
      new CliSpawnError(`Could not start ${options.cliPath}: ${describe(error)}`, { cause: error }),
    );
  }
  return new Promise((resolve, reject) => {
    let settled = false;
    child.once("error", (error) => {
      if (settled) return;
      settled = true;
      reject(new CliSpawnError(`Could not start ${options.cliPath}: ${error.message}`, { cause: error }));
    });
    child.once("spawn", () => {
      if (settled) return;
      const pid = child.pid;
      if (pid === undefined) {
        settled = true;
        reject(new CliSpawnError(`${options.cliPath} started without a pid`));
        return;
      }
      settled = true;
      resolve(new CliProcess(child, pid, options));
    });
  });
}

/**
 * A running child. Invariants: `onExit` is called exactly once; after it, the process group has
 * been sent SIGKILL (grandchildren do not outlive their CLI) and no timer of this object is left.
 */
export class CliProcess {
  /** The child's pid, which is also its process group id. */
  readonly pid: number;
  /** Resolves with the exit, once `onExit` has been called. */
  readonly exited: Promise<CliExit>;

  private readonly child: ChildLike;
  private readonly options: CliProcessOptions;
  private readonly timers: Timers;
  private readonly killGroup: KillGroup;
  private readonly stderrLines: StderrLineSplitter;
  private resolveExited!: (exit: CliExit) => void;
  private exitStatus: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private openPipes = 2;
  private drainTimer: unknown;
  private finished: CliExit | undefined;
  private stopRequested = false;
  private stopping: Promise<CliExit> | undefined;
  private cause: string | undefined;

  /** Use {@link spawnCliProcess}. */
  constructor(child: ChildLike, pid: number, options: CliProcessOptions) {
    this.child = child;
    this.pid = pid;
    this.options = options;
    this.timers = options.timers ?? globalTimers;
    this.killGroup = options.killGroup ?? killProcessGroup;
    this.stderrLines = new StderrLineSplitter(options.config.maxStderrLineBytes);
    this.exited = new Promise((resolve) => (this.resolveExited = resolve));

    child.stdout.on("data", (chunk) => {
      if (this.finished === undefined) options.onStdout(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
    });
    child.stderr.on("data", (chunk) => {
      if (this.finished !== undefined) return;
      for (const line of this.stderrLines.push(chunk)) options.onStderrLine(line);
    });
    child.stdout.on("close", () => this.pipeClosed());
    child.stderr.on("close", () => this.pipeClosed());
    child.stdout.on("error", (error) => this.pipeFailed("stdout", error));
    child.stderr.on("error", () => undefined);
    child.stdin.on("error", (error) => this.pipeFailed("stdin", error));
    child.once("exit", (code, signal) => {
      this.exitStatus = { code, signal };
      if (this.openPipes <= 0) {
        this.finish();
        return;
      }
      // A grandchild that inherited stdout would keep it open for as long as it lives.
      this.drainTimer = this.timers.setTimeout(() => this.finish(), options.config.exitDrainMs);
    });
  }

  /** The child has not been reported as ended. */
  get running(): boolean {
    return this.finished === undefined;
  }

  /** Writes one complete line to stdin; throws {@link CliPipeError} when stdin is closed or broken. */
  write(line: string): void {
    const stdin = this.child.stdin;
    if (this.finished !== undefined || this.stopRequested || stdin.destroyed || stdin.writableEnded) {
      throw new CliPipeError(`The CLI's stdin is closed (pid ${this.pid})`);
    }
    stdin.write(line);
  }

  /**
   * Stops the child politely, escalating: stdin closed, `stdinGraceMs`; SIGTERM to the group,
   * `termGraceMs`; SIGKILL to the group, `killWaitMs`. Idempotent; the exit counts as expected.
   */
  stop(): Promise<CliExit> {
    this.stopRequested = true;
    this.stopping ??= this.escalate();
    return this.stopping;
  }

  /** Kills the group at once; the exit is a crash (with `cause`) unless a stop was asked for. */
  kill(cause: string): void {
    this.cause ??= cause;
    this.signalGroup("SIGKILL");
  }

  private async escalate(): Promise<CliExit> {
    const { stdinGraceMs, termGraceMs, killWaitMs } = this.options.config;
    if (this.finished !== undefined) return this.finished;
    try {
      this.child.stdin.end();
    } catch {
      // stdin already broken: the signals below still apply
    }
    if (await this.exitsWithin(stdinGraceMs)) return this.exited;
    this.signalGroup("SIGTERM");
    if (await this.exitsWithin(termGraceMs)) return this.exited;
    this.signalGroup("SIGKILL");
    if (await this.exitsWithin(killWaitMs)) return this.exited;
    // Unkillable (D state) or an exit event that never came: report it ended rather than hang the caller.
    this.cause ??= `no exit within ${killWaitMs} ms of SIGKILL`;
    this.finish();
    return this.exited;
  }

  private exitsWithin(ms: number): Promise<boolean> {
    if (this.finished !== undefined) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = this.timers.setTimeout(() => resolve(false), ms);
      void this.exited.then(() => {
        this.timers.clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private signalGroup(signal: NodeJS.Signals): void {
    try {
      this.killGroup(this.pid, signal);
    } catch {
      // EPERM and the like: nothing better to do than to wait for the exit
    }
  }

  private pipeFailed(pipe: "stdin" | "stdout", error: Error): void {
    if (this.finished !== undefined || this.stopRequested) return;
    // A broken pipe is a dead conversation even if the process lingers: end it, report a crash.
    this.kill(`${pipe} pipe error: ${error.message}`);
  }

  private pipeClosed(): void {
    this.openPipes--;
    if (this.openPipes <= 0 && this.exitStatus !== undefined) this.finish();
  }

  private finish(): void {
    if (this.finished !== undefined) return;
    this.timers.clearTimeout(this.drainTimer);
    const rest = this.stderrLines.end();
    if (rest !== undefined) this.options.onStderrLine(rest);
    // Sweep the group: the Bash tool's shells and anything they started die with their CLI.
    this.signalGroup("SIGKILL");
    const status = this.exitStatus ?? { code: null, signal: null };
    const exit: CliExit = { pid: this.pid, code: status.code, signal: status.signal, expected: this.stopRequested };
    if (this.cause !== undefined && !this.stopRequested) exit.cause = this.cause;
    this.finished = exit;
    this.resolveExited(exit);
    this.options.onExit(exit);
  }
}

/** Splits stderr into lines, cutting each at `maxBytes` so a runaway line cannot grow without bound. */
class StderrLineSplitter {
  private partial = "";
  private readonly decoder = new TextDecoder("utf-8");

  constructor(private readonly maxBytes: number) {}

  push(chunk: Uint8Array | string): string[] {
    const text = this.partial + (typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true }));
    const parts = text.split("\n");
    this.partial = parts.pop() ?? "";
    if (this.partial.length > this.maxBytes) {
      parts.push(this.partial);
      this.partial = "";
    }
    return parts.map((line) => this.clip(line.endsWith("\r") ? line.slice(0, -1) : line)).filter((line) => line !== "");
  }

  end(): string | undefined {
    const rest = this.partial + this.decoder.decode();
    this.partial = "";
    return rest.trim() === "" ? undefined : this.clip(rest);
  }

  private clip(line: string): string {
    return line.length > this.maxBytes ? `${line.slice(0, this.maxBytes)}… (${line.length} chars)` : line;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
