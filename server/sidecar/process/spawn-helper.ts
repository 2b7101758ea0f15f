/**
 * The sidecar's spawn helper: a small Node process (`spawn-helper-child.mjs`) that starts the
 * claude CLIs and hands their three pipes to the sidecar over IPC. Spawning blocks the spawning
 * thread while the kernel copies its page tables (~25 ms, up to ~50, from a ~350 MB sidecar),
 * and no session's event reaches a socket meanwhile: every new session and
 * every resume paid it on the loop, 150 of them in a row when a restarted sidecar resumes its
 * sessions. From the helper the sidecar pays a few IPC messages.
 *
 * The child is the helper's, its pipes are the sidecar's: {@link SpawnHelper.spawn} returns what
 * Node's spawn does as far as `cli-process.ts` uses it (pid, the pipes, `spawn`, `error` and `exit`).
 * Signals go to the child's process group from the sidecar as before (`killProcessGroup`). If the
 * helper dies, a child it started is watched by its pid and its exit reported without a code (a
 * sandboxed child ends with it: bubblewrap's `--die-with-parent` now names the helper, which
 * itself exits when the sidecar goes, as the children did); a spawn asked of it meanwhile fails
 * like a failed spawn. If the helper cannot be started at all,
 * children are spawned by the sidecar itself (`spawnDetached`).
 *
 * Owns: the helper process and the children's hand-over. Must not: build a child's argv or
 * environment (the runner does), or decide when a child stops.
 */
import type { ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { spawnDetached, type ChildLike, type SpawnFunction } from "./cli-process";
import { forkHelper, holdOpen } from "./helper-process";
import { procProcessTable } from "./reap-orphans";

const childScript = fileURLToPath(new URL("./spawn-helper-child.mjs", import.meta.url));

/** How often a child whose helper died is looked for. */
const orphanPollMs = 250;

export interface SpawnHelper {
  spawn: SpawnFunction;
  /** Stops the helper (its children keep running; spawns asked meanwhile fail). */
  close(): void;
  /** The helper's pid while it runs. */
  pid(): number | undefined;
}

type HelperMessage =
  | { type: "stdin" | "stdout" | "stderr"; id: number }
  | { type: "spawned"; id: number; pid: number }
  | { type: "exit"; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { type: "error"; id: number; message: string; code?: string };

/** A child started by the helper: Node's ChildProcess as far as the supervisor uses it. */
class HelperChild extends EventEmitter implements ChildLike {
  pid: number | undefined;
  private pipes: { stdin?: Socket; stdout?: Socket; stderr?: Socket } = {};
  private ended = false;
  private watch: NodeJS.Timeout | undefined;

  get stdin(): Socket {
    return this.pipe("stdin");
  }
  get stdout(): Socket {
    return this.pipe("stdout");
  }
  get stderr(): Socket {
    return this.pipe("stderr");
  }

  private pipe(name: "stdin" | "stdout" | "stderr"): Socket {
    const socket = this.pipes[name];
    if (!socket) throw new Error(`the child's ${name} has not arrived from the spawn helper`);
    return socket;
  }

  /** A message of the helper about this child (with the pipe it carries, if any). */
  take(message: HelperMessage, handle: unknown): void {
    switch (message.type) {
      case "stdin":
      case "stdout":
      case "stderr":
        this.pipes[message.type] = handle as Socket;
        return;
      case "spawned":
        if (!this.pipes.stdin || !this.pipes.stdout || !this.pipes.stderr) {
          this.fail(
            Object.assign(new Error("the spawn helper did not hand over the child's pipes"), { code: "EPIPE" }),
          );
          return;
        }
        this.pid = message.pid;
        this.emit("spawn");
        return;
      case "exit":
        this.exit(message.code, message.signal);
        return;
      case "error":
        this.fail(Object.assign(new Error(message.message), message.code ? { code: message.code } : {}));
        return;
    }
  }

  /** The helper is gone: a child not started yet failed; a running one is watched by its pid (a zombie counts as gone). */
  orphaned(reason: string): void {
    if (this.ended) return;
    if (this.pid === undefined) {
      this.fail(Object.assign(new Error(reason), { code: "ECHILD" }));
      return;
    }
    const pid = this.pid;
    this.watch = setInterval(() => {
      if (!procProcessTable.isAlive(pid)) this.exit(null, null);
    }, orphanPollMs);
    this.watch.unref();
  }

  fail(error: Error): void {
    if (this.ended) return;
    this.ended = true;
    for (const socket of Object.values(this.pipes)) socket?.destroy();
    this.emit("error", error);
  }

  private exit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.watch);
    this.emit("exit", code, signal);
  }

  get done(): boolean {
    return this.ended;
  }
}

export function createSpawnHelper(
  options: { onFallback?: (reason: string) => void; /** the Node binary (tests) */ execPath?: string } = {},
): SpawnHelper {
  let helper: ChildProcess | undefined;
  let unavailable = false;
  let nextId = 1;
  /** Children asked of the helper that have not exited. */
  const children = new Map<number, HelperChild>();

  const orphanAll = (reason: string) => {
    for (const [id, child] of children) {
      children.delete(id);
      child.orphaned(reason);
    }
  };

  const start = (): ChildProcess | undefined => {
    if (helper) return helper;
    if (unavailable) return undefined;
    try {
      const process_ = forkHelper(childScript, { execPath: options.execPath });
      if (process_.pid === undefined) {
        // not started (no such binary, no resources): its 'error' follows; spawn here from now on
        process_.once("error", (err) => options.onFallback?.(err.message));
        unavailable = true;
        return undefined;
      }
      process_.on("message", (message: HelperMessage, handle: unknown) => {
        const child = children.get(message.id);
        if (!child) {
          (handle as Socket | undefined)?.destroy();
          return;
        }
        child.take(message, handle);
        if (child.done) children.delete(message.id);
        if (children.size === 0) idle(process_);
      });
      process_.on("error", (err) => {
        if (helper === process_) helper = undefined;
        orphanAll(`the spawn helper failed: ${err.message}`);
      });
      process_.on("exit", (code, signal) => {
        if (helper === process_) helper = undefined;
        orphanAll(`the spawn helper exited (${signal ?? `code ${code}`})`);
      });
      helper = process_;
      idle(process_);
      return process_;
    } catch (err) {
      unavailable = true;
      options.onFallback?.(err instanceof Error ? err.message : String(err));
      return undefined;
    }
  };

  // The helper never keeps the sidecar alive on its own (a running child's pipes do).
  const idle = (process_: ChildProcess) => holdOpen(process_, false);
  const busy = (process_: ChildProcess) => holdOpen(process_, true);

  const spawn: SpawnFunction = (file, args, spawnOptions) => {
    const process_ = start();
    if (!process_?.connected) return spawnDetached(file, args, spawnOptions);
    const id = nextId++;
    const child = new HelperChild();
    children.set(id, child);
    busy(process_);
    process_.send({ type: "spawn", id, file, args: [...args], cwd: spawnOptions.cwd, env: spawnOptions.env }, (err) => {
      if (err && children.delete(id)) {
        child.fail(
          Object.assign(new Error(`the spawn helper did not take the request: ${err.message}`), { code: "ECHILD" }),
        );
      }
    });
    return child;
  };

  return {
    spawn,
    close() {
      unavailable = true;
      const process_ = helper;
      helper = undefined;
      orphanAll("the spawn helper was stopped");
      if (process_?.connected) process_.disconnect();
    },
    pid: () => helper?.pid,
  };
}
