/**
 * Whether a workspace is a git repository, as Conduit accepts one: git run in the workspace's
 * real root, never finding a repository above it, must name that root as its top level and
 * keep its git directory inside the workspace (a `.git` file or `core.worktree` pointing
 * elsewhere — into another workspace, say — is refused: Conduit would read what is not this
 * workspace's).
 */
import { lstat } from "node:fs/promises";
import path from "node:path";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { isInside, realRoot, type WorkspaceRoot } from "@/server/workspace-fs/workspace-path";
import { guardOverrides, hasCustomMergeDriver } from "./git-config-guard";
import { runGit, runGitOk, splitNul, type GitOutput } from "./run-git";

/** A repository checkout Conduit may run git in. */
export interface GitCheckout {
  /** The workspace's real root: the repository's top level, or the worktree's parent workspace. */
  workspaceRoot: string;
  /** Where git runs: the top level of this checkout (the root, or a session's worktree). */
  topLevel: string;
  /** The real git directory (for a worktree, its private one under the main `.git/worktrees`). */
  gitDir: string;
  /** The `-c` settings that void the repository config's commands. */
  config: string[];
  /** The config names a merge driver: Conduit refuses merges here. */
  customMergeDriver: boolean;
  /** Excluded workspaces nested inside. */
  excluded: readonly string[];
}

/** The "not a repository" refusal every git route gives. */
export function notARepository(): AppError {
  return new AppError(ErrorCode.conflict, "This workspace is not a git repository.");
}

/**
 * The checkout at `dir` (the workspace root, or a session worktree inside it), or undefined
 * when there is none Conduit accepts.
 */
export async function findCheckout(ws: WorkspaceRoot, dir?: string): Promise<GitCheckout | undefined> {
  const root = await realRoot(ws);
  const cwd = dir ?? root;
  if (!isInside(root, cwd)) return undefined;
  let out: GitOutput;
  try {
    out = await runGit({ cwd, ceiling: root, args: ["rev-parse", "--path-format=absolute", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"] });
  } catch (err) {
    if (err instanceof AppError && err.code === ErrorCode.unavailable) throw err;
    return undefined;
  }
  if (out.code !== 0) return undefined;
  const [topLevel, gitDir, commonDir] = out.stdout.toString("utf8").split("\n");
  if (!topLevel || !gitDir || !commonDir) return undefined;
  if (path.resolve(topLevel) !== cwd) return undefined;
  if (!isInside(root, gitDir) || !isInside(root, commonDir)) return undefined;
  for (const other of ws.excluded ?? []) if (isInside(other, cwd) || isInside(other, gitDir)) return undefined;
  // Objects borrowed from elsewhere (alternates) or a repository whose `.git` names another's
  // (`commondir` in the main git directory) would show what is not this workspace's.
  if (await anyExists([path.join(commonDir, "objects", "info", "alternates"), path.join(commonDir, "objects", "info", "http-alternates")])) return undefined;
  if (gitDir === commonDir && (await anyExists([path.join(gitDir, "commondir")]))) return undefined;
  const keys = splitNul(await runGitOk({ cwd, ceiling: root, args: ["config", "--list", "--name-only", "-z"] }, "Cannot read the repository's settings"));
  return {
    workspaceRoot: root,
    topLevel: cwd,
    gitDir,
    config: guardOverrides(keys),
    customMergeDriver: hasCustomMergeDriver(keys),
    excluded: ws.excluded ?? [],
  };
}

async function anyExists(paths: readonly string[]): Promise<boolean> {
  for (const p of paths) {
    try {
      await lstat(p);
      return true;
    } catch {
      // absent
    }
  }
  return false;
}

/** The workspace's own checkout, or the 409 "not a repository". */
export async function requireCheckout(ws: WorkspaceRoot, dir?: string): Promise<GitCheckout> {
  const checkout = await findCheckout(ws, dir);
  if (!checkout) throw notARepository();
  return checkout;
}

/** Runs git in a checkout with its guard settings. */
export function gitIn(checkout: GitCheckout, args: readonly string[], env?: Readonly<Record<string, string>>): Promise<GitOutput> {
  return runGit({ cwd: checkout.topLevel, ceiling: checkout.workspaceRoot, config: checkout.config, args, ...(env ? { env } : {}) });
}

/** Runs git in a checkout and throws a 409 naming `failure` when it fails. */
export function gitInOk(checkout: GitCheckout, args: readonly string[], failure: string, env?: Readonly<Record<string, string>>): Promise<Buffer> {
  return runGitOk({ cwd: checkout.topLevel, ceiling: checkout.workspaceRoot, config: checkout.config, args, ...(env ? { env } : {}) }, failure);
}
