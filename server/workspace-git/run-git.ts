/**
 * The one way Conduit runs the system `git`, inside a workspace door only (`server/workspace-agent`,
 * whose sandbox holds nothing but that workspace): `execFile` with an argv (never a shell
 * string), a fixed environment (no terminal prompts, no system config, Conduit's own global
 * config, no pager, no editor, literal pathspecs, a ceiling above the workspace so no repository
 * above it is ever found), and the settings that must hold against the repository's own config
 * passed as command-line config through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`
 * (never `-c` in the argv; command-line config outranks the repository's): hooks and fsmonitor
 * off, `safe.directory` for this call's directory. A workspace's `.git/config` is still read by
 * git; drivers it names (filters, textconv, diff and merge drivers) are voided by
 * `guardOverrides` where seen, and whatever slips past runs inside the door, where it reaches
 * nothing but the workspace. A timeout and an output cap bound every call.
 */
import { execFileBuffered } from "@/server/workspace-fs/exec-file";
import path from "node:path";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";

/** Longest a git command may run before it is killed. */
export const gitTimeoutMs = 20_000;
/** Most bytes of stdout kept from one git command; more is an error, never a silent cut. */
export const gitMaxOutputBytes = 16 * 1024 * 1024;

/** Command-line settings of every call (`key=value`): hooks, fsmonitor, signing, ssh and housekeeping off. */
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
  /** Extra `key=value` command-line settings (the config guard's overrides). */
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

/** `GIT_CONFIG_COUNT` and its `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` for `key=value` settings (a value may be empty). */
export function configEnv(settings: readonly string[]): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(settings.length) };
  settings.forEach((setting, i) => {
    const eq = setting.indexOf("=");
    if (eq <= 0) throw new Error(`a git setting must be key=value: ${JSON.stringify(setting)}`);
    env[`GIT_CONFIG_KEY_${i}`] = setting.slice(0, eq);
    env[`GIT_CONFIG_VALUE_${i}`] = setting.slice(eq + 1);
  });
  return env;
}

/**
 * The environment of every git child: nothing of the server's own leaks in. `settings` are the
 * command-line config of the call (the fixed ones first, then `safe.directory` for `cwd`).
 */
export function gitEnv(ceiling: string, extra: Readonly<Record<string, string>> = {}, settings: readonly string[] = fixedGitConfig, cwd: string = ceiling): NodeJS.ProcessEnv {
  return {
    // typed as the process env (Next.js makes NODE_ENV required there); git ignores it
    NODE_ENV: "production",
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    LANG: "C",
    LC_ALL: "C",
    HOME: "/nonexistent",
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    // Conduit's own global config (the door's), never the user's
    GIT_CONFIG_GLOBAL: process.env.CONDUIT_GIT_CONFIG_GLOBAL ?? "/dev/null",
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
    ...configEnv([...settings, `safe.directory=${cwd}`]),
  };
}

/** Runs git; a non-zero exit is returned (callers decide), a timeout or an oversized output throws. */
export function runGit(run: GitRun): Promise<GitOutput> {
  const maxBuffer = run.maxOutputBytes ?? gitMaxOutputBytes;
  return execFileBuffered("git", [...run.args], {
    cwd: run.cwd,
    env: gitEnv(run.ceiling, run.env, [...fixedGitConfig, ...(run.config ?? [])], run.cwd),
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
