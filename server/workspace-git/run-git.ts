/**
 * The one way Conduit runs the system `git`: `execFile` with an argv (never a shell string), a
 * fixed environment (no terminal prompts, no system or user config, no pager, no editor, literal
 * pathspecs, a ceiling above the workspace so no repository above it is ever found), hooks and
 * fsmonitor off, a timeout and an output cap. A workspace's own `.git/config` is still read by
 * git, so the commands its keys could run (filters, textconv, diff and merge drivers) are
 * neutralised per call by `guardOverrides` (`git-config-guard.ts`).
 */
import { execFileBuffered } from "@/server/workspace-fs/exec-file";
import path from "node:path";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";

/** Longest a git command may run before it is killed. */
export const gitTimeoutMs = 20_000;
/** Most bytes of stdout kept from one git command; more is an error, never a silent cut. */
export const gitMaxOutputBytes = 16 * 1024 * 1024;

/** `-c` settings on every call: a workspace's hooks and fsmonitor never run in the server process. */
export const fixedGitConfig: readonly string[] = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.pager=cat",
  "commit.gpgSign=false",
  "tag.gpgSign=false",
  // commands a repository's config could otherwise make git run: signature checks, external diff, ssh
  "merge.verifySignatures=false",
  "gpg.program=/bin/false",
  "diff.external=",
  "core.sshCommand=/bin/false",
  "submodule.recurse=false",
  // no background housekeeping left behind in the server process
  "gc.auto=0",
  "maintenance.auto=false",
  "protocol.allow=never",
  "core.quotePath=false",
  "advice.detachedHead=false",
  "init.defaultBranch=main",
];

export interface GitRun {
  /** The directory git runs in. */
  cwd: string;
  args: readonly string[];
  /** The workspace root: git never looks for a repository above it (`GIT_CEILING_DIRECTORIES`). */
  ceiling: string;
  /** Extra `-c key=value` settings (the config guard's overrides). */
  config?: readonly string[];
  /** Extra environment (author and committer identity). */
  env?: Readonly<Record<string, string>>;
  timeoutMs?: number;
  maxOutputBytes?: number;
}

export interface GitOutput {
  /** The exit code (0 is success). */
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** The environment of every git child: nothing of the server's own leaks in. */
export function gitEnv(ceiling: string, extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  return {
    // typed as the process env (Next.js makes NODE_ENV required there); git ignores it
    NODE_ENV: "production",
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    LANG: "C",
    LC_ALL: "C",
    HOME: "/nonexistent",
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_CEILING_DIRECTORIES: path.dirname(ceiling),
    GIT_LITERAL_PATHSPECS: "1",
    GIT_PAGER: "cat",
    GIT_EDITOR: ":",
    GIT_SEQUENCE_EDITOR: ":",
    GIT_MERGE_AUTOEDIT: "no",
    GIT_ASKPASS: "/bin/false",
    SSH_ASKPASS: "/bin/false",
    GIT_NO_REPLACE_OBJECTS: "1",
    ...extra,
  };
}

/** Runs git; a non-zero exit is returned (callers decide), a timeout or an oversized output throws. */
export function runGit(run: GitRun): Promise<GitOutput> {
  const argv = [...[...fixedGitConfig, ...(run.config ?? [])].flatMap((c) => ["-c", c]), ...run.args];
  const maxBuffer = run.maxOutputBytes ?? gitMaxOutputBytes;
  return execFileBuffered("git", argv, {
    cwd: run.cwd,
    env: gitEnv(run.ceiling, run.env),
    timeout: run.timeoutMs ?? gitTimeoutMs,
    killSignal: "SIGKILL",
    maxBuffer,
  }).then(({ error: err, stdout, stderr }) => {
    if (!err) return { code: 0, stdout, stderr: stderr.toString("utf8") };
    if (err.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") {
      throw new AppError(ErrorCode.conflict, "git produced more output than Conduit reads; the repository is too large for this view.");
    }
    if (err.killed) throw new AppError(ErrorCode.unavailable, "git took too long and was stopped.");
    if (err.code === "ENOENT") throw new AppError(ErrorCode.unavailable, "git is not installed on the server.");
    if (typeof err.code === "number") return { code: err.code, stdout, stderr: stderr.toString("utf8") };
    throw new AppError(ErrorCode.internal, "git could not be run.");
  });
}

/** Runs git and throws when it fails, with git's own first error line for people. */
export async function runGitOk(run: GitRun, failure: string): Promise<Buffer> {
  const out = await runGit(run);
  if (out.code !== 0) throw new AppError(ErrorCode.conflict, `${failure}: ${firstErrorLine(out.stderr)}`);
  return out.stdout;
}

/** git's most telling stderr line (`fatal:` / `error:` first), trimmed for a message. */
export function firstErrorLine(stderr: string): string {
  const lines = stderr.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  const line = lines.find((l) => /^(fatal|error):/.test(l)) ?? lines[0] ?? "git failed";
  return line.replace(/^(fatal|error):\s*/, "").slice(0, 300);
}

/** Splits NUL-separated output (the `-z` formats) into its fields. */
export function splitNul(out: Buffer): string[] {
  const text = out.toString("utf8");
  const parts = text.split("\0");
  if (parts.at(-1) === "") parts.pop();
  return parts;
}
