/**
 * The long-lived door processes of one Conduit process, one per scope (a workspace's files, its
 * git, a CLI config directory), started on first use, ended after a while without requests, and
 * started again when one dies (requests in flight then fail as `unavailable`). A door never
 * keeps its caller alive on its own: it is referenced only while a request waits.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { z } from "zod";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { DoorLauncher } from "./door-launch";
import type { DoorOpName, DoorOps } from "./ops";
import { LineReader } from "./line-reader";
import { decodeLine, encodeLine, errorFromWire, maxAnswerLineBytes, ZDoorAnswer } from "./protocol";
import { scopeKey, type DoorScope } from "./scope";

export type DoorInput<K extends DoorOpName> = z.input<DoorOps[K]["input"]>;
export type DoorOutput<K extends DoorOpName> = Awaited<ReturnType<DoorOps[K]["run"]>>;

export interface DoorPoolOptions {
  /** How doors start (`createDoorLauncher`); asked once, on first use. */
  launcher: () => Promise<DoorLauncher>;
  /** A door without requests this long ends (default 60 s). */
  idleMs?: number;
  /** Most doors alive at once; past it the one idle longest ends (default 64). */
  maxDoors?: number;
  /** A request not answered in this long fails and its door is ended (default 120 s). */
  requestTimeoutMs?: number;
  /** Run on the host before a scope's door starts (create its shadow folder). */
  prepare?: (scope: DoorScope) => Promise<void>;
  /** Each line a door writes on stderr. */
  onLog?: (line: string, scope: DoorScope) => void;
}

interface Pending {
  op: string;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

class Door {
  readonly pending = new Map<number, Pending>();
  lastUsed = Date.now();
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly lines: LineReader;
  private nextId = 1;
  exited = false;

  constructor(
    readonly scope: DoorScope,
    readonly child: ChildProcessWithoutNullStreams,
    private readonly options: Required<Pick<DoorPoolOptions, "idleMs" | "requestTimeoutMs">> & Pick<DoorPoolOptions, "onLog">,
    private readonly onGone: (door: Door) => void,
  ) {
    this.lines = new LineReader(
      (line) => this.answer(line),
      maxAnswerLineBytes,
      () => this.end("the workspace door sent an answer too long to read"),
    );
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => this.lines.push(chunk));
    child.stderr.setEncoding("utf8");
    let errText = "";
    child.stderr.on("data", (chunk: string) => {
      errText += chunk;
      let nl: number;
      while ((nl = errText.indexOf("\n")) !== -1) {
        const line = errText.slice(0, nl);
        errText = errText.slice(nl + 1);
        if (line.trim() !== "") (options.onLog ?? defaultLog)(line.slice(0, 2000), scope);
      }
      if (errText.length > 64 * 1024) errText = "";
    });
    child.stdin.on("error", () => undefined);
    child.on("error", (err) => this.gone(`the workspace door could not run: ${err.message}`));
    child.on("exit", (code, signal) => this.gone(`the workspace door stopped (${signal ?? `code ${code}`})`));
    this.hold(false);
  }

  private answer(line: string) {
    let parsed;
    let why = "not JSON";
    try {
      parsed = ZDoorAnswer.safeParse(decodeLine(line));
      if (!parsed.success) why = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ").slice(0, 500);
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success) {
      this.end(`the workspace door sent a line that is not an answer (${why}; ${JSON.stringify(line.slice(0, 200))})`);
      return;
    }
    const answer = parsed.data;
    const waiting = this.pending.get(answer.id);
    if (!waiting) return;
    this.pending.delete(answer.id);
    clearTimeout(waiting.timer);
    if (answer.ok) waiting.resolve(answer.value);
    else {
      // the door's own failure is for the log; people get the generic message (protocol.ts)
      if (answer.error.kind === "internal") (this.options.onLog ?? defaultLog)(`${waiting.op} failed: ${answer.error.message.slice(0, 1000)}`, this.scope);
      waiting.reject(errorFromWire(answer.error));
    }
    this.settled();
  }

  request(op: string, input: unknown, timeoutMs = this.options.requestTimeoutMs): Promise<unknown> {
    if (this.exited) return Promise.reject(new AppError(ErrorCode.unavailable, "The workspace door is not running; try again."));
    const id = this.nextId++;
    this.lastUsed = Date.now();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.hold(true);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        reject(new AppError(ErrorCode.unavailable, `A workspace operation (${op}) took too long and was stopped.`));
        this.end(`a request (${op}) took longer than ${timeoutMs} ms`);
      }, timeoutMs);
      this.pending.set(id, { op, resolve, reject, timer });
      this.child.stdin.write(encodeLine({ id, op, input }) + "\n");
    });
  }

  private settled() {
    if (this.pending.size > 0) return;
    this.lastUsed = Date.now();
    this.hold(false);
    this.idleTimer = setTimeout(() => this.end("idle"), this.options.idleMs);
    this.idleTimer.unref();
  }

  /** A door is referenced (keeps its caller alive) only while a request waits. */
  private hold(held: boolean) {
    for (const handle of [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as { ref?: () => void; unref?: () => void }[]) {
      if (held) handle.ref?.();
      else handle.unref?.();
    }
  }

  /** Ends the door: stdin closed (it exits), then SIGKILL if it lingers. */
  end(why: string) {
    if (this.exited) return;
    if (why !== "idle" && why !== "closed") (this.options.onLog ?? defaultLog)(`ending the door: ${why}`, this.scope);
    this.gone(why === "idle" ? "the workspace door ended" : `the workspace door was ended: ${why}`);
    this.child.stdin.end();
    const kill = setTimeout(() => this.child.kill("SIGKILL"), why === "idle" ? 2000 : 0);
    kill.unref();
  }

  private gone(why: string) {
    if (!this.exited) {
      this.exited = true;
      if (this.idleTimer) clearTimeout(this.idleTimer);
      this.onGone(this);
    }
    for (const [id, waiting] of this.pending) {
      this.pending.delete(id);
      clearTimeout(waiting.timer);
      waiting.reject(new AppError(ErrorCode.unavailable, `${why}; try again.`));
    }
  }
}

const defaultLog = (line: string, scope: DoorScope) => process.stderr.write(`workspace door (${scope.purpose} ${scope.workspace?.root ?? scope.configDir ?? ""}): ${line}\n`);

export class DoorPool {
  private readonly doors = new Map<string, Door>();
  private launcher: Promise<DoorLauncher> | undefined;
  private readonly options: Required<Pick<DoorPoolOptions, "idleMs" | "requestTimeoutMs" | "maxDoors">> & DoorPoolOptions;
  private closed = false;
  /** Doors started since this pool was made (a figure for tests and benches). */
  started = 0;

  constructor(options: DoorPoolOptions) {
    this.options = { idleMs: 60_000, requestTimeoutMs: 120_000, maxDoors: 64, ...options };
  }

  /** The launcher's sandbox mode, once known. */
  async mode(): Promise<DoorLauncher["mode"]> {
    return (await this.launcherOnce()).mode;
  }

  private launcherOnce(): Promise<DoorLauncher> {
    this.launcher ??= this.options.launcher();
    this.launcher.catch(() => (this.launcher = undefined));
    return this.launcher;
  }

  private starting = new Map<string, Promise<Door>>();

  private async doorFor(scope: DoorScope): Promise<Door> {
    if (this.closed) throw new AppError(ErrorCode.unavailable, "Conduit is shutting down.");
    const key = scopeKey(scope);
    const open = this.doors.get(key);
    if (open && !open.exited) return open;
    const already = this.starting.get(key);
    if (already) return already;
    const start = (async () => {
      const launcher = await this.launcherOnce();
      await this.options.prepare?.(scope);
      this.evictIfFull();
      const launch = launcher.launch(scope);
      const child = spawn(launch.file, launch.args, { stdio: ["pipe", "pipe", "pipe"], env: launch.env, cwd: "/" });
      const door = new Door(scope, child, this.options, (gone) => {
        if (this.doors.get(key) === gone) this.doors.delete(key);
      });
      this.started++;
      this.doors.set(key, door);
      return door;
    })();
    this.starting.set(key, start);
    try {
      return await start;
    } finally {
      this.starting.delete(key);
    }
  }

  private evictIfFull() {
    if (this.doors.size < this.options.maxDoors) return;
    const idle = [...this.doors.values()].filter((d) => d.pending.size === 0).sort((a, b) => a.lastUsed - b.lastUsed)[0];
    idle?.end("idle");
  }

  /** Runs `op` in the door of `scope`. */
  async call<K extends DoorOpName>(scope: DoorScope, op: K, input: DoorInput<K>, options: { timeoutMs?: number } = {}): Promise<DoorOutput<K>> {
    const door = await this.doorFor(scope);
    return (await door.request(op, input, options.timeoutMs)) as DoorOutput<K>;
  }

  /** How many doors are alive. */
  size(): number {
    return this.doors.size;
  }

  /** Ends every door (requests in flight fail). */
  close(): void {
    this.closed = true;
    for (const door of this.doors.values()) door.end("closed");
    this.doors.clear();
  }
}
