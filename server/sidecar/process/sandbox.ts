/**
 * The sandbox every `claude` child runs in (DESIGN rule 11), chosen once at sidecar start from
 * CONDUIT_SANDBOX: `bwrap` (refuse to start without a working bubblewrap), `auto` (bubblewrap
 * when it works, otherwise run unisolated and say so loudly), `off`.
 *
 * `@anthropic-ai/sandbox-runtime` was evaluated first and not used: it wraps a shell command
 * string from a process-wide singleton configuration and starts from `--ro-bind / /` with
 * deny lists, where Conduit needs a different deny-by-default root per child (its own
 * workspace and config directory) and an argv without a shell. Bubblewrap is driven directly;
 * the argv is built by the pure `sandbox-argv.ts`.
 */
import { execFile } from "node:child_process";
import { accessSync, constants, existsSync, realpathSync } from "node:fs";
import { getEnv } from "@/server/env/env";
import { findOnPath, inspectSystem as inspectHostSystem } from "@/server/workspace-agent/host-system";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CliSpawnError } from "./cli-process";
import {
  buildSandboxArgv,
  etcAllowList,
  sandboxEnv,
  sandboxLayoutProblem,
  systemDirAllowList,
  type ProtectedPaths,
  type SandboxArgvInput,
  type SystemEntry,
} from "./sandbox-argv";

export type { ProtectedPaths };

/** The launcher that opens the seccomp filter for bwrap (`--seccomp 9`) and execs it. */
export const sandboxEnterScript = path.join(import.meta.dirname, "sandbox-enter.sh");

/** The file descriptor the launcher opens the filter on. */
export const seccompFd = 9;

/** The sandbox's own `/etc/passwd` and `/etc/group` (uid 1000 is `session`, HOME {@link sandboxHome}). */
export const identityFiles = {
  passwd: path.join(import.meta.dirname, "sandbox-etc", "passwd"),
  group: path.join(import.meta.dirname, "sandbox-etc", "group"),
} as const;

/** Conduit's checkout (this file is server/sidecar/process/sandbox.ts in it). */
export const conduitCheckout = path.resolve(import.meta.dirname, "..", "..", "..");

/** The compiled seccomp filter for this machine's architecture (see sandbox-seccomp.py), or undefined when none is shipped. */
export function seccompFilterPath(arch: string = process.arch): string | undefined {
  const name = arch === "x64" ? "x86_64" : arch === "arm64" ? "aarch64" : undefined;
  if (name === undefined) return undefined;
  const file = path.join(import.meta.dirname, `sandbox-seccomp-${name}.bpf`);
  return existsSync(file) ? file : undefined;
}

/** The launch of bwrap with `args`: through the launcher that opens the seccomp filter. */
function bwrapLaunch(bwrapPath: string, args: readonly string[], filter: string): { file: string; args: string[] } {
  return { file: "/bin/sh", args: [sandboxEnterScript, filter, bwrapPath, ...args] };
}

/** Which isolation is in force. */
export type SandboxMode = "bwrap" | "off";

/** What CONDUIT_SANDBOX asks for. */
export type SandboxSetting = "auto" | "bwrap" | "off";

/** Everything needed to start one child, before and after wrapping. */
export interface CliLaunch {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
}

/**
 * A narrowed network for one child (see `server/sidecar/network/session-network.ts`): the sandbox
 * gets a network namespace of its own, `socketDir` bound in, and `forwarderScript` runs first,
 * turning each Unix socket into a port on the sandbox's loopback before it starts the CLI.
 */
export interface SandboxNetwork {
  socketDir: string;
  forwards: readonly { port: number; socket: string }[];
  forwarderScript: string;
}

/** Wraps the launch of a child in its sandbox (or leaves it as it is). */
export interface CliSandbox {
  readonly mode: SandboxMode;
  /**
   * The launch that runs `launch` inside the sandbox of a workspace and its CLI config directory;
   * with `network`, in a network namespace of its own.
   */
  wrap(
    launch: CliLaunch,
    dirs: { workspaceRoot: string; configDir: string; cwd?: string; /** More directories shown read-only (a spawn's MCP config). */ readOnly?: readonly string[] },
    network?: SandboxNetwork,
  ): CliLaunch;
}

/** Why a narrowed workspace's session cannot start without a sandbox. */
export const narrowingNeedsSandbox =
  "This workspace's network is narrowed, but Conduit runs without a sandbox here (CONDUIT_SANDBOX=off, or bubblewrap is missing), so the narrowing cannot be enforced. The session was not started: ask the operator to enable the sandbox, or an owner to set the network to open.";

/** No isolation: the child runs as the sidecar's user with the sidecar's view of the files. */
export const noSandbox: CliSandbox = {
  mode: "off",
  wrap(launch, _dirs, network) {
    // Never run a narrowed workspace open: nothing here could narrow it.
    if (network !== undefined) throw new CliSpawnError(narrowingNeedsSandbox);
    return launch;
  },
};

/** The HOME of a sandboxed child: an empty tmpfs of its own. */
export const sandboxHome = "/home/session";

/** The refusal to start when CONDUIT_SANDBOX=bwrap and bubblewrap does not work. */
export class SandboxUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SandboxUnavailableError";
  }
}

export { findOnPath };

/** The system entries that exist on this host, as a session's sandbox should show them. */
export function inspectSystem(): SystemEntry[] {
  return inspectHostSystem(systemDirAllowList, etcAllowList);
}

/** Options of {@link createBwrapSandbox}. */
export interface BwrapSandboxOptions {
  bwrapPath: string;
  /** The `claude` executable: its directory (real path) is shown read-only. */
  cliPath: string;
  /** More read-only directories (a fake CLI's script directory in tests). */
  readOnly?: readonly string[];
  /** Default: {@link inspectSystem} (looked up once). */
  system?: readonly SystemEntry[];
  /**
   * Conduit's own directories: the sandbox refuses to be made when one lies under a path it binds
   * (a {@link SandboxLayoutError}). The checkout is always checked; default just the checkout.
   */
  protect?: ProtectedPaths;
  /** Sizes of the private /tmp and HOME (default sandbox-argv's `sandboxTmpfsBytes`). */
  tmpfsBytes?: SandboxArgvInput["tmpfsBytes"];
}

/** The refusal to start when the sandbox would show Conduit's own files (see `sandboxLayoutProblem`). */
export class SandboxLayoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SandboxLayoutError";
  }
}

function realOrResolved(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

/** Throws {@link SandboxLayoutError} when a protected directory lies under one of `bound`. */
export function assertSandboxLayout(protect: ProtectedPaths, bound: readonly string[]): void {
  const real = Object.fromEntries(Object.entries({ checkout: conduitCheckout, ...protect }).map(([k, v]) => [k, v === undefined ? undefined : realOrResolved(v)]));
  const problem = sandboxLayoutProblem(real, bound.map(realOrResolved));
  if (problem !== undefined) throw new SandboxLayoutError(problem);
}

/** A bubblewrap sandbox; the host layout is inspected once, here. */
export function createBwrapSandbox(options: BwrapSandboxOptions): CliSandbox {
  const system = options.system ?? inspectSystem();
  const readOnly = [path.dirname(realpathSync(options.cliPath)), ...(options.readOnly ?? [])];
  const nodePath = realpathSync(process.execPath);
  const filter = seccompFilterPath();
  if (filter === undefined) throw new SandboxUnavailableError(`no seccomp filter is shipped for this architecture (${process.arch}); sandbox-seccomp.py makes them`);
  // Everything any session's sandbox binds from the host, read-only or not (the forwarder's directory too).
  const bound = [
    ...system.filter((entry) => entry.kind !== "symlink").map((entry) => entry.path),
    ...readOnly,
    path.dirname(nodePath),
    path.dirname(realpathSync(path.join(import.meta.dirname, "..", "network", "sandbox-forwarder.mjs"))),
    identityFiles.passwd,
    identityFiles.group,
  ];
  assertSandboxLayout(options.protect ?? {}, bound);
  return {
    mode: "bwrap",
    wrap(launch, dirs, network) {
      const workspaceRoot = existingRealPath("workspace directory", dirs.workspaceRoot);
      const configDir = existingRealPath("CLI config directory", dirs.configDir);
      const cwd = dirs.cwd === undefined ? workspaceRoot : existingRealPath("session worktree", dirs.cwd);
      const spawnReadOnly = (dirs.readOnly ?? []).map((dir) => existingRealPath("spawn directory", dir));
      // Narrowed: the forwarder (run by the host's node, both read-only) starts the CLI.
      const command =
        network === undefined
          ? { file: launch.file, args: launch.args, readOnly }
          : {
              file: nodePath,
              args: [network.forwarderScript, ...network.forwards.map((f) => `${f.port}=${f.socket}`), "--", launch.file, ...launch.args],
              readOnly: [...new Set([...readOnly, path.dirname(nodePath), path.dirname(realpathSync(network.forwarderScript))])],
            };
      const args = buildSandboxArgv({
        bwrapPath: options.bwrapPath,
        system,
        readOnly: [...command.readOnly, ...spawnReadOnly],
        workspaceRoot,
        cwd,
        configDir,
        home: sandboxHome,
        file: command.file,
        args: command.args,
        privateNetwork: network === undefined ? undefined : { socketDir: existingRealPath("socket directory", network.socketDir) },
        seccompFd,
        identityFiles,
        tmpfsBytes: options.tmpfsBytes,
      });
      return { ...bwrapLaunch(options.bwrapPath, args, filter), cwd, env: sandboxEnv(launch.env, sandboxHome) };
    },
  };
}

function existingRealPath(what: string, dir: string): string {
  try {
    return realpathSync(dir);
  } catch (error) {
    throw new CliSpawnError(`The ${what} ${dir} does not exist; the session cannot start in its sandbox`, { cause: error });
  }
}

/** Runs `true` in a sandbox like a session's (user namespace, seccomp filter, sized tmpfs); resolves with undefined when it works, else why not. */
export async function probeBwrap(bwrapPath: string, system: readonly SystemEntry[] = inspectSystem()): Promise<string | undefined> {
  const filter = seccompFilterPath();
  if (filter === undefined) return `no seccomp filter is shipped for this architecture (${process.arch})`;
  const truePath = ["/usr/bin/true", "/bin/true"].find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  if (truePath === undefined) return "no `true` executable in /usr/bin or /bin to probe with";
  const scratch = await mkdtemp(path.join(os.tmpdir(), "conduit-sandbox-probe-"));
  try {
    const workspaceRoot = path.join(scratch, "w");
    const configDir = path.join(scratch, "c");
    await Promise.all([mkdir(workspaceRoot), mkdir(configDir)]);
    const args = buildSandboxArgv({
      bwrapPath,
      system,
      readOnly: [],
      workspaceRoot: realpathSync(workspaceRoot),
      configDir: realpathSync(configDir),
      home: sandboxHome,
      file: truePath,
      args: [],
      seccompFd,
      identityFiles,
      privateNetwork: { socketDir: realpathSync(scratch) },
    });
    const launch = bwrapLaunch(bwrapPath, args, filter);
    return await new Promise((resolve) => {
      execFile(launch.file, launch.args, { timeout: 10_000, killSignal: "SIGKILL" }, (error, _stdout, stderr) => {
        resolve(error ? String(stderr).trim() || error.message : undefined);
      });
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** What {@link chooseSandbox} decided. */
export interface SandboxChoice {
  sandbox: CliSandbox;
  /** Set when `auto` fell back to no isolation: the reason, for the log and the banner. */
  warning?: string;
}

/** Dependencies of {@link chooseSandbox}; injected in tests. */
export interface ChooseSandboxDeps {
  findBwrap?: () => string | undefined;
  probe?: (bwrapPath: string) => Promise<string | undefined>;
  create?: (bwrapPath: string) => CliSandbox;
  /** Conduit's directories no session may see; default {@link configuredProtectedPaths}. */
  protect?: ProtectedPaths;
}

/** The checkout, CONDUIT_DATA_DIR and the workspaces root (CONDUIT_WORKSPACES_ROOT, or DATA_DIR/workspaces) of this process. */
export function configuredProtectedPaths(): ProtectedPaths {
  const env = getEnv();
  const dataDir = path.resolve(env.CONDUIT_DATA_DIR);
  return { checkout: conduitCheckout, dataDir, workspacesRoot: path.resolve(env.CONDUIT_WORKSPACES_ROOT ?? path.join(dataDir, "workspaces")) };
}

/**
 * Applies CONDUIT_SANDBOX: `off` → none; `bwrap` → bubblewrap or {@link SandboxUnavailableError};
 * `auto` → bubblewrap when found and a trial run works, else none with a warning. With bubblewrap,
 * a {@link SandboxLayoutError} when the checkout, the data directory or the workspaces root lies
 * under a path every sandbox shows (the sidecar does not start).
 */
export async function chooseSandbox(setting: SandboxSetting, cliPath: string, deps: ChooseSandboxDeps = {}): Promise<SandboxChoice> {
  if (setting === "off") return { sandbox: noSandbox };
  const bwrapPath = (deps.findBwrap ?? (() => findOnPath("bwrap")))();
  const problem =
    bwrapPath === undefined
      ? "bubblewrap (`bwrap`) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
      : await (deps.probe ?? probeBwrap)(bwrapPath).then(
          (why) => (why === undefined ? undefined : `bubblewrap at ${bwrapPath} does not work here: ${why}`),
        );
  if (problem === undefined && bwrapPath !== undefined) {
    return { sandbox: (deps.create ?? ((p) => createBwrapSandbox({ bwrapPath: p, cliPath, protect: deps.protect ?? configuredProtectedPaths() })))(bwrapPath) };
  }
  if (setting === "bwrap") {
    throw new SandboxUnavailableError(`CONDUIT_SANDBOX=bwrap, but ${problem}. Install it, or set CONDUIT_SANDBOX=auto or off.`);
  }
  return { sandbox: noSandbox, warning: `${problem}: sessions are NOT isolated from each other or from Conduit's data` };
}
