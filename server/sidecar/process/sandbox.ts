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
import { accessSync, constants, realpathSync } from "node:fs";
import { findOnPath, inspectSystem as inspectHostSystem } from "@/server/workspace-agent/host-system";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CliSpawnError } from "./cli-process";
import { buildSandboxArgv, etcAllowList, sandboxEnv, systemDirAllowList, type SystemEntry } from "./sandbox-argv";

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
}

/** A bubblewrap sandbox; the host layout is inspected once, here. */
export function createBwrapSandbox(options: BwrapSandboxOptions): CliSandbox {
  const system = options.system ?? inspectSystem();
  const readOnly = [path.dirname(realpathSync(options.cliPath)), ...(options.readOnly ?? [])];
  const nodePath = realpathSync(process.execPath);
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
      });
      return { file: options.bwrapPath, args, cwd, env: sandboxEnv(launch.env, sandboxHome) };
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

/** Runs `true` in a sandbox like a session's; resolves with undefined when it works, else why not. */
export async function probeBwrap(bwrapPath: string, system: readonly SystemEntry[] = inspectSystem()): Promise<string | undefined> {
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
    });
    return await new Promise((resolve) => {
      execFile(bwrapPath, args, { timeout: 10_000, killSignal: "SIGKILL" }, (error, _stdout, stderr) => {
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
}

/**
 * Applies CONDUIT_SANDBOX: `off` → none; `bwrap` → bubblewrap or {@link SandboxUnavailableError};
 * `auto` → bubblewrap when found and a trial run works, else none with a warning.
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
    return { sandbox: (deps.create ?? ((p) => createBwrapSandbox({ bwrapPath: p, cliPath })))(bwrapPath) };
  }
  if (setting === "bwrap") {
    throw new SandboxUnavailableError(`CONDUIT_SANDBOX=bwrap, but ${problem}. Install it, or set CONDUIT_SANDBOX=auto or off.`);
  }
  return { sandbox: noSandbox, warning: `${problem}: sessions are NOT isolated from each other or from Conduit's data` };
}
