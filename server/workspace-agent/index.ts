/**
 * The workspace door, as the web app and the sidecar use it. The rule it keeps (docs/SECURITY.md):
 * outside a sandbox, no Conduit process opens, walks, watches or runs a program over a path
 * inside a workspace or a CLI config directory. Every such operation is a request to a door
 * process (`door-main.ts`) sandboxed to that workspace: `workspaceDoor().call(scope, op, input)`.
 *
 * Only this module imports `server/workspace-fs`, `server/workspace-git`,
 * `server/workspace-changes` and `server/workspace-settings` (a lint wall); callers import the
 * door's client, its scopes, and the pure helpers re-exported below.
 */
import { realpath } from "node:fs/promises";
import path from "node:path";
import { getEnv } from "@/server/env/env";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { createDoorLauncher } from "./door-launch";
import { DoorPool, type DoorPoolOptions } from "./door-pool";
import type { DoorScope } from "./scope";
import { prepareShadowDir, shadowDirOf } from "./shadow-layout";

export type { DoorScope } from "./scope";
export type { DoorInput, DoorOutput } from "./door-pool";
export { DoorPool } from "./door-pool";
export { createDoorLauncher } from "./door-launch";
export { shadowDirOf } from "./shadow-layout";

/**
 * This module's pool. Not on `globalThis`, though Next.js may load this module once per route
 * bundle: the errors a pool rebuilds are its own copy's classes, and each copy's callers test
 * `instanceof` against theirs (a shared pool turned a save conflict into a 500). So each copy
 * keeps its doors; they share the one bundle build (`door-launch.ts`).
 */
let pool: DoorPool | undefined;

/** The options every pool of this process shares (the shadow folders prepared before a door starts). */
export const doorPoolDefaults: Pick<DoorPoolOptions, "prepare"> = {
  prepare: async (scope) => {
    if (scope.shadowDir) await prepareShadowDir(scope.shadowDir);
  },
};

/** This process's doors (CONDUIT_SANDBOX decides whether they are sandboxed). */
export function workspaceDoor(): DoorPool {
  pool ??= new DoorPool({ ...doorPoolDefaults, launcher: () => createDoorLauncher({ setting: getEnv().CONDUIT_SANDBOX }) });
  return pool;
}

/** Replaces this process's doors (tests, benches; the sidecar with its own settings). Returns the one replaced. */
export function setWorkspaceDoor(next: DoorPool | undefined): DoorPool | undefined {
  const previous = pool;
  pool = next;
  return previous;
}

/** A workspace as its callers know it: the directory, its row's id, workspaces nested in it. */
export interface WorkspaceRef {
  id: string;
  rootPath: string;
  /** Real paths of other workspaces inside this one (hidden in its doors). */
  excluded?: readonly string[];
}

async function realWorkspace(ws: WorkspaceRef): Promise<{ root: string; excluded: string[] }> {
  try {
    // The workspace's own directory: its parent is the workspaces root, which no session writes.
    const root = await realpath(/*turbopackIgnore: true*/ ws.rootPath);
    return { root, excluded: [...(ws.excluded ?? [])].filter((e) => e !== root && e.startsWith(root + path.sep)) };
  } catch {
    throw new AppError(ErrorCode.notFound, "The workspace directory is missing.");
  }
}

/** The scope of a workspace's files door: its files, its settings, its shadow repositories. */
export async function filesScope(ws: WorkspaceRef, dataDir: string = getEnv().CONDUIT_DATA_DIR): Promise<DoorScope> {
  return { purpose: "files", workspace: await realWorkspace(ws), shadowDir: shadowDirOf(path.resolve(/*turbopackIgnore: true*/ dataDir), ws.id) };
}

/** The scope of a workspace's git door: its own repository only. */
export async function gitScope(ws: WorkspaceRef): Promise<DoorScope> {
  return { purpose: "git", workspace: await realWorkspace(ws) };
}

/** The scope of a CLI config directory's door (the config guard). */
export async function configScope(configDir: string): Promise<DoorScope> {
  return { purpose: "files", configDir: await realpath(/*turbopackIgnore: true*/ configDir) };
}

// Pure helpers of the workspace layers that callers use on their side (no I/O).
export { maxRelativePathLength, parseRelativePath } from "@/server/workspace-fs/workspace-path";
export { FileConflictError, WorktreeConflictError } from "@/server/shared/errors/workspace-errors";
export { maxCommitPaths } from "@/server/workspace-git/git-limits";
export type { DiscardResult, GitIdentity } from "@/server/workspace-git/commit-files";
export type { SessionWorktree } from "@/server/workspace-git/session-worktree";
// The Changes view's pure helpers (server/workspace-changes): which snapshots a scope or a rewind
// means, where a session's changes live, a change's hunks; its watchers' limits (a type).
export { changeRootOf, commitsOfScope, rewindTarget, sessionCommits, type ScopeStep } from "@/server/workspace-changes/change-scope";
export { hunksOf } from "@/server/workspace-changes/hunks";
export type { WatchLimits } from "@/server/workspace-changes/change-watcher";
