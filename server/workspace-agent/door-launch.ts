/**
 * How a door process is started: the door's script (built once per process from
 * `door-main.ts` into a private temporary folder, one file with everything it imports), a git
 * config of Conduit's own, and, when the sandbox works, bubblewrap around it (`door-sandbox.ts`).
 * With CONDUIT_SANDBOX=off, or `auto` without a working bubblewrap, the same script runs as a
 * plain child: the same code, without the walls (the product says so: the unisolated banner).
 */
import { execFile } from "node:child_process";
import { existsSync, realpathSync, rmSync } from "node:fs";
import { chmod, mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { doorEnv, doorEtcAllowList, doorHome, doorSystemDirs, buildDoorSandboxArgv } from "./door-sandbox";
import { findOnPath, inspectSystem, type SystemEntry } from "./host-system";
import type { DoorScope } from "./scope";

export type DoorSandboxMode = "bwrap" | "off";

/** A door's command line. */
export interface DoorLaunch {
  file: string;
  args: string[];
  env: Record<string, string> & { NODE_ENV: "production" };
}

export interface DoorLauncher {
  readonly mode: DoorSandboxMode;
  /** Set when `auto` fell back to running doors without a sandbox: why. */
  readonly warning: string | undefined;
  launch(scope: DoorScope): DoorLaunch;
}

/**
 * The git config every door's git reads as its global one (`GIT_CONFIG_GLOBAL`): defaults only.
 * What must hold against a repository's own config is passed per call as command-line config
 * (`GIT_CONFIG_COUNT`, `server/workspace-git/run-git.ts`), which a repository cannot override.
 */
export const doorGitConfig = `[init]
\tdefaultBranch = main
[advice]
\tdetachedHead = false
[core]
\tquotePath = false
[user]
\tname = Conduit
\temail = conduit@localhost
`;

function findProjectRoot(from: string): string {
  let dir = path.resolve(/*turbopackIgnore: true*/ from);
  for (;;) {
    if (existsSync(path.join(dir, "server", "workspace-agent", "door-main.ts"))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`the workspace door's source (server/workspace-agent/door-main.ts) is not found above ${from}`);
    dir = parent;
  }
}

interface DoorFiles {
  script: string;
  gitConfig: string;
}

/** Once per process, on `globalThis` (Next.js may load this module once per route bundle). */
const processBuild = globalThis as typeof globalThis & { __conduitDoorFiles?: Promise<DoorFiles> | undefined };

/** Builds the door's script once per process (esbuild, ~0.1 s) into a private folder removed at exit. */
export function buildDoorFiles(): Promise<DoorFiles> {
  const built = (processBuild.__conduitDoorFiles ??= (async () => {
    const root = findProjectRoot(process.cwd());
    const dir = await mkdtemp(path.join(os.tmpdir(), "conduit-door-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const script = path.join(dir, "door.mjs");
    const gitConfig = path.join(dir, "gitconfig");
    const esbuild = await import(/* webpackIgnore: true */ "esbuild");
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: [path.join(root, "server", "workspace-agent", "door-main.ts")],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile: script,
      tsconfig: path.join(root, "tsconfig.json"),
      logLevel: "silent",
      banner: { js: 'import { createRequire as __conduitRequire } from "node:module"; const require = __conduitRequire(import.meta.url);' },
    });
    await writeFile(gitConfig, doorGitConfig, { mode: 0o644 });
    await chmod(script, 0o644);
    return { script: realpathSync(script), gitConfig: realpathSync(gitConfig) };
  })());
  built.catch(() => (processBuild.__conduitDoorFiles = undefined));
  return built;
}

/** The read-write directories and hidden ones of a scope. */
function bindsOf(scope: DoorScope): { readWrite: string[]; hidden: string[] } {
  const readWrite = [scope.workspace?.root, scope.shadowDir, scope.configDir].filter((d): d is string => d !== undefined);
  return { readWrite, hidden: [...(scope.workspace?.excluded ?? [])] };
}

/** Starts doors as plain children (no sandbox). */
function plainLauncher(files: DoorFiles, nodePath: string, warning: string | undefined): DoorLauncher {
  return {
    mode: "off",
    warning,
    launch(scope) {
      return {
        file: nodePath,
        args: [files.script, JSON.stringify(scope)],
        env: { ...doorEnv(os.tmpdir()), CONDUIT_GIT_CONFIG_GLOBAL: files.gitConfig },
      };
    },
  };
}

/** The node binary's directory, to bind read-only unless a system directory already shows it. */
function nodeBindsOf(nodePath: string, system: readonly SystemEntry[]): string[] {
  const nodeDir = path.dirname(nodePath);
  const inSystem = system.some((e) => e.kind !== "symlink" && (nodeDir === e.path || nodeDir.startsWith(e.path + "/")));
  return inSystem ? [] : [nodeDir];
}

/** Starts doors in bubblewrap. */
function bwrapLauncher(files: DoorFiles, nodePath: string, bwrapPath: string, system: readonly SystemEntry[]): DoorLauncher {
  const nodeBinds = nodeBindsOf(nodePath, system);
  return {
    mode: "bwrap",
    warning: undefined,
    launch(scope) {
      const { readWrite, hidden } = bindsOf(scope);
      const args = buildDoorSandboxArgv({
        system,
        readOnly: [...nodeBinds, files.script, files.gitConfig],
        readWrite,
        hidden,
        file: nodePath,
        args: [files.script, JSON.stringify(scope)],
      });
      return { file: bwrapPath, args, env: { ...doorEnv(doorHome), CONDUIT_GIT_CONFIG_GLOBAL: files.gitConfig } };
    },
  };
}

/** Runs `node -e 0` in a door's sandbox: undefined when it works, else why not. */
async function probe(bwrapPath: string, nodePath: string, system: readonly SystemEntry[]): Promise<string | undefined> {
  const nodeBinds = nodeBindsOf(nodePath, system);
  const args = buildDoorSandboxArgv({ system, readOnly: nodeBinds, readWrite: [], hidden: [], file: nodePath, args: ["-e", "0"] });
  return new Promise((resolve) => {
    execFile(bwrapPath, args, { timeout: 10_000, killSignal: "SIGKILL", env: doorEnv(doorHome) }, (error, _stdout, stderr) =>
      resolve(error ? String(stderr).trim() || error.message : undefined),
    );
  });
}

export interface CreateDoorLauncherOptions {
  /** CONDUIT_SANDBOX. */
  setting: "auto" | "bwrap" | "off";
  /** Default: `bwrap` on PATH. */
  bwrapPath?: string | undefined;
  /** Default: this process's node. */
  nodePath?: string;
}

/** The launcher CONDUIT_SANDBOX asks for; `bwrap` without a working bubblewrap throws. */
export async function createDoorLauncher(options: CreateDoorLauncherOptions): Promise<DoorLauncher> {
  const files = await buildDoorFiles();
  const nodePath = realpathSync(options.nodePath ?? process.execPath);
  if (options.setting === "off") return plainLauncher(files, nodePath, "CONDUIT_SANDBOX=off: workspace doors run without a sandbox");
  const bwrapPath = options.bwrapPath ?? findOnPath("bwrap");
  const system = inspectSystem(doorSystemDirs, doorEtcAllowList);
  const problem =
    bwrapPath === undefined
      ? "bubblewrap (`bwrap`) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
      : await probe(bwrapPath, nodePath, system).then((why) => (why === undefined ? undefined : `bubblewrap at ${bwrapPath} does not work here: ${why}`));
  if (problem === undefined && bwrapPath !== undefined) return bwrapLauncher(files, nodePath, bwrapPath, system);
  if (options.setting === "bwrap") throw new Error(`CONDUIT_SANDBOX=bwrap, but ${problem}`);
  return plainLauncher(files, nodePath, `${problem}: workspace doors run without a sandbox`);
}
