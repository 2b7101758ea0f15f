/**
 * `execFile` with buffered output, through a runner a process may replace. By default the child is
 * spawned right here: in a workspace door (`server/workspace-agent`), the only process that runs
 * git over workspace content. (The sidecar once replaced the runner with an exec helper, since a
 * spawn from its ~350 MB process blocked its loop ~25 ms; git no longer runs in the sidecar.)
 */
import { execFile } from "node:child_process";

export interface ExecFileOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** ms; the child is killed with `killSignal` after it */
  timeout?: number;
  killSignal?: NodeJS.Signals;
  maxBuffer?: number;
}

/** What `execFile`'s callback gets: an error (non-zero exit, a kill, no such file, too much output) or none. */
export interface ExecFileResult {
  error: ExecFileError | null;
  stdout: Buffer;
  stderr: Buffer;
}

/** `execFile`'s error: `code` is the exit code, or a string such as `ENOENT` or `ERR_CHILD_PROCESS_STDIO_MAXBUFFER`. */
export type ExecFileError = Error & { code?: number | string; killed?: boolean; signal?: NodeJS.Signals | null };

export type ExecFileRunner = (file: string, args: readonly string[], options: ExecFileOptions, input?: string | Buffer) => Promise<ExecFileResult>;

/** Spawns the child in this process. */
export const execFileHere: ExecFileRunner = (file, args, options, input) =>
  new Promise((resolve) => {
    const child = execFile(file, [...args], { ...options, encoding: "buffer", windowsHide: true }, (error, stdout, stderr) =>
      resolve({ error: error as ExecFileError | null, stdout, stderr }),
    );
    if (input !== undefined) child.stdin?.end(input);
  });

let runner: ExecFileRunner = execFileHere;

/** Replaces the runner for this process (the sidecar's exec helper); returns the one it replaced. */
export function setExecFileRunner(next: ExecFileRunner): ExecFileRunner {
  const previous = runner;
  runner = next;
  return previous;
}

/** Runs `file` with `args`, its output buffered, through this process's runner. */
export function execFileBuffered(file: string, args: readonly string[], options: ExecFileOptions, input?: string | Buffer): Promise<ExecFileResult> {
  return runner(file, args, options, input);
}
