/**
 * The sidecar's exec helper: a small Node process (`exec-helper-child.mjs`, ~40 MB) that spawns
 * the sidecar's short-lived children (git for the turn snapshots and the changes views) and sends
 * their output back over IPC. Spawning blocks the spawning thread while the kernel copies its page
 * tables: ~25 ms (up to ~50) per git run from a ~350 MB sidecar, during which no session's event
 * reached a socket; from the helper, the sidecar's loop pays a message each way. Started on first
 * use, started again if it dies (the requests in flight then fail like a failed spawn); if it
 * cannot be started at all, children are spawned here as before. Its environment is `PATH` alone:
 * each request brings the child's own.
 */
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { forkHelper, holdOpen } from "./helper-process";
import { execFileHere, type ExecFileError, type ExecFileOptions, type ExecFileResult, type ExecFileRunner } from "@/server/workspace-fs/exec-file";

interface Answer {
  id: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
  error: { message: string; code?: number | string; killed?: boolean; signal?: NodeJS.Signals | null } | null;
}

const childScript = fileURLToPath(new URL("./exec-helper-child.mjs", import.meta.url));

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export interface ExecHelper {
  run: ExecFileRunner;
  /** Stops the helper (requests in flight fail). */
  close(): void;
  /** The helper's pid while it runs. */
  pid(): number | undefined;
}

export function createExecHelper(options: { onFallback?: (reason: string) => void; /** the Node binary (tests) */ execPath?: string } = {}): ExecHelper {
  let helper: ChildProcess | undefined;
  let unavailable = false;
  let nextId = 1;
  /** Requests sent to the helper and not answered yet, with what they asked (a helper that never started runs them here). */
  const pending = new Map<number, { resolve: (result: ExecFileResult) => void; request: Parameters<ExecFileRunner> }>();

  const failAll = (message: string) => {
    for (const [id, { resolve }] of pending) {
      pending.delete(id);
      const error: ExecFileError = Object.assign(new Error(message), { code: "ECHILD" });
      resolve({ error, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) });
    }
  };

  const giveUp = (reason: string) => {
    unavailable = true;
    options.onFallback?.(reason);
  };

  const start = (): ChildProcess | undefined => {
    if (helper) return helper;
    if (unavailable) return undefined;
    try {
      const child = forkHelper(childScript, { execPath: options.execPath, serialization: "advanced" });
      child.on("message", (message: Answer) => {
        const resolve = pending.get(message.id)?.resolve;
        if (!resolve) return;
        pending.delete(message.id);
        const error = message.error ? (Object.assign(new Error(message.error.message), message.error) as ExecFileError) : null;
        resolve({ error, stdout: asBuffer(message.stdout), stderr: asBuffer(message.stderr) });
        if (pending.size === 0) idle(child);
      });
      child.on("error", (err) => {
        if (helper === child) helper = undefined;
        if (child.pid === undefined) {
          // it was never started (fork failed): nothing it was asked has run, so all of it runs here
          giveUp(err.message);
          for (const [id, { resolve, request }] of pending) {
            pending.delete(id);
            void execFileHere(...request).then(resolve);
          }
          return;
        }
        failAll(`the exec helper failed: ${err.message}`);
      });
      child.on("exit", (code, signal) => {
        if (helper === child) helper = undefined;
        failAll(`the exec helper exited (${signal ?? `code ${code}`})`);
      });
      helper = child;
      idle(child);
      return child;
    } catch (err) {
      giveUp(err instanceof Error ? err.message : String(err));
      return undefined;
    }
  };

  // The helper never keeps the sidecar alive on its own: referenced only while a request waits.
  const idle = (child: ChildProcess) => holdOpen(child, false);
  const busy = (child: ChildProcess) => holdOpen(child, true);

  const run: ExecFileRunner = (file, args, execOptions: ExecFileOptions, input) => {
    const child = start();
    if (!child) return execFileHere(file, args, execOptions, input);
    const id = nextId++;
    return new Promise<ExecFileResult>((resolve) => {
      pending.set(id, { resolve, request: [file, args, execOptions, input] });
      busy(child);
      const sent = child.send({ id, file, args: [...args], options: execOptions, input }, (err) => {
        if (err && pending.delete(id)) {
          // the helper is going: this one request runs here instead
          void execFileHere(file, args, execOptions, input).then(resolve);
        }
      });
      if (!sent && !child.connected && pending.delete(id)) void execFileHere(file, args, execOptions, input).then(resolve);
    });
  };

  return {
    run,
    close() {
      unavailable = true;
      const child = helper;
      helper = undefined;
      failAll("the exec helper was stopped");
      if (child?.connected) child.disconnect();
    },
    pid: () => helper?.pid,
  };
}
