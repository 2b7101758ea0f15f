/**
 * A session's own git worktree: a checkout of a new branch `conduit/<short id>` made from the
 * workspace's current branch, at `<workspace>/.conduit/worktrees/<short id>`.
 *
 * Why inside the workspace (under a folder the repository's `info/exclude` hides) and not in
 * the data directory: a worktree's `.git` file points into the main repository's `.git`, which
 * must be reachable and writable for git to work there. The sandbox already binds the whole
 * workspace read-write, so the session can run git in its worktree with no new bind, the file
 * routes' containment needs no exception, and nothing of the data directory is shown to a
 * session. The session's working directory is the worktree, so its relative writes land there.
 *
 * Merging back runs in the main checkout (or rebases the branch in the worktree, then
 * fast-forwards); conflicts abort the attempt and are listed, so nothing is lost.
 */
import { constants } from "node:fs";
import { lstat, mkdir, open, realpath, rm } from "node:fs/promises";
import path from "node:path";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { WorktreeConflictError } from "@/server/shared/errors/workspace-errors";
import type { GitFileDiff, WorktreeChange, WorktreeMergeStrategy } from "@/server/shared/wire/git";
import { isInside, parseRelativePath, realRoot, type WorkspaceRoot } from "@/server/workspace-fs/workspace-path";
import { identityEnv, type GitIdentity } from "./commit-files";
import { committedSide, workingSide } from "./file-diff";
import { statusOfCheckout } from "./git-status";
import { findCheckout, gitIn, gitInOk, requireCheckout, type GitCheckout } from "./open-repository";
import { firstErrorLine, splitNul } from "./run-git";

/** Where session worktrees live, relative to the workspace root. */
export const worktreeFolder = ".conduit/worktrees";

/** A session's worktree as stored on its row. */
export interface SessionWorktree {
  path: string;
  branch: string;
  baseBranch: string;
}

/** The short id in a session's worktree folder and branch name. */
export function worktreeShortId(sessionId: string): string {
  const clean = sessionId.replace(/[^A-Za-z0-9]/g, "");
  return clean.slice(-10) || "session";
}

export { WorktreeConflictError } from "@/server/shared/errors/workspace-errors";

/**
 * The directory `base/segments…`, made one level at a time: each level that exists is checked
 * first (a real directory, no symlink, inside `root`), and only then is the next one created, so
 * nothing is ever made through a symlink. Answers the directory's real path (which is its path).
 */
export async function ensureRealDirectory(root: string, base: string, segments: readonly string[], refusal: string): Promise<string> {
  const refuse = () => new AppError(ErrorCode.forbidden, refusal);
  let at: string;
  try {
    at = await realpath(base);
  } catch {
    throw refuse();
  }
  if (at !== base || !isInside(root, at)) throw refuse();
  for (const segment of segments) {
    if (segment === "" || segment === "." || segment === ".." || segment.includes("/")) throw refuse();
    const next = path.join(at, segment);
    let st = await lstat(next).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw err;
    });
    if (st === undefined) {
      await mkdir(next, { mode: 0o755 }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "EEXIST") throw err;
      });
      st = await lstat(next);
    }
    if (st.isSymbolicLink() || !st.isDirectory()) throw refuse();
    at = next;
  }
  // made or found level by level; the whole path is checked once more (a level swapped meanwhile)
  const real = await realpath(at).catch(() => undefined);
  if (real !== at || !isInside(root, at)) throw refuse();
  return at;
}

/** Adds `/.conduit/` to the repository's `info/exclude` (no symlink followed, inside the workspace only). */
async function excludeConduitFolder(checkout: GitCheckout): Promise<void> {
  const realGitDir = await realpath(checkout.gitDir).catch(() => undefined);
  if (realGitDir === undefined || !isInside(checkout.workspaceRoot, realGitDir)) throw new AppError(ErrorCode.forbidden, "The repository's git directory leads outside the workspace.");
  const realInfo = await ensureRealDirectory(checkout.workspaceRoot, realGitDir, ["info"], "The repository's info folder leads outside the workspace.");
  const file = await open(path.join(realInfo, "exclude"), constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_APPEND, 0o644);
  try {
    const st = await file.stat();
    if (!st.isFile()) throw new AppError(ErrorCode.conflict, "The repository's info/exclude is not a regular file.");
    const text = (await file.readFile({ encoding: "utf8" })) as string;
    if (text.split("\n").some((l) => l.trim() === "/.conduit/")) return;
    await file.write(`${text === "" || text.endsWith("\n") ? "" : "\n"}/.conduit/\n`);
  } finally {
    await file.close();
  }
}

/**
 * Makes the worktree of a new session (before its CLI is spawned): branch `conduit/<short id>`
 * from the workspace's current branch (or commit, when HEAD is detached).
 */
export async function createSessionWorktree(ws: WorkspaceRoot, sessionId: string): Promise<SessionWorktree> {
  const checkout = await requireCheckout(ws);
  const status = await statusOfCheckout(checkout);
  if (status.head === null) throw new AppError(ErrorCode.conflict, "The repository has no commit yet: commit once before starting a session in its own worktree.");
  const short = worktreeShortId(sessionId);
  const branch = `conduit/${short}`;
  const baseBranch = status.branch ?? status.head;
  await excludeConduitFolder(checkout);
  const realParent = await ensureRealDirectory(
    checkout.workspaceRoot,
    checkout.workspaceRoot,
    worktreeFolder.split("/"),
    `${worktreeFolder} leads outside the workspace (a symlink); Conduit does not create worktrees there.`,
  );
  const at = path.join(realParent, short);
  // git fills an empty directory in place (following a symlink there): only a real one, or none
  if ((await lstat(at).catch(() => undefined))?.isSymbolicLink()) {
    throw new AppError(ErrorCode.forbidden, `${worktreeFolder}/${short} is a symlink; Conduit does not create worktrees there.`);
  }
  await gitInOk(checkout, ["worktree", "add", "--quiet", "-b", branch, at, status.head], "Cannot create the session's worktree");
  return { path: at, branch, baseBranch };
}

/** The worktree's checkout, checked to be the one stored and inside the workspace. */
async function openWorktree(ws: WorkspaceRoot, wt: SessionWorktree): Promise<GitCheckout> {
  const root = await realRoot(ws);
  if (!isInside(root, wt.path) || wt.path === root) throw new AppError(ErrorCode.forbidden, "The session's worktree is not inside its workspace.");
  const checkout = await findCheckout(ws, wt.path);
  if (!checkout) throw new AppError(ErrorCode.conflict, "The session's worktree is gone.");
  return checkout;
}

async function mergeBaseOf(checkout: GitCheckout, wt: SessionWorktree): Promise<string> {
  const out = await gitInOk(checkout, ["merge-base", wt.baseBranch, "HEAD"], `Cannot find where ${wt.branch} left ${wt.baseBranch}`);
  return out.toString("utf8").trim();
}

/** Every path the session's branch (committed or not) changed since it left its base. */
export async function listWorktreeChanges(ws: WorkspaceRoot, wt: SessionWorktree): Promise<WorktreeChange[]> {
  const checkout = await openWorktree(ws, wt);
  const base = await mergeBaseOf(checkout, wt);
  const tracked = splitNul(await gitInOk(checkout, ["--no-optional-locks", "diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--name-status", "-z", base], "Cannot list the worktree's changes"));
  const changes: WorktreeChange[] = [];
  for (let i = 0; i + 1 < tracked.length; i += 2) {
    const letter = tracked[i]!;
    changes.push({ path: tracked[i + 1]!, status: letter === "A" ? "added" : letter === "D" ? "deleted" : "modified" });
  }
  const untracked = splitNul(await gitInOk(checkout, ["ls-files", "--others", "--exclude-standard", "-z"], "Cannot list the worktree's new files"));
  for (const p of untracked) changes.push({ path: p, status: "added" });
  return changes.sort((a, b) => a.path.localeCompare(b.path));
}

/** One file of the session's branch against where it left its base. */
export async function readWorktreeFileDiff(ws: WorkspaceRoot, wt: SessionWorktree, relInput: string): Promise<GitFileDiff> {
  const rel = parseRelativePath(relInput);
  if (rel === "") throw new AppError(ErrorCode.invalidPayload, "Name a file.");
  const checkout = await openWorktree(ws, wt);
  const base = await mergeBaseOf(checkout, wt);
  const [before, after] = await Promise.all([committedSide(checkout, base, rel), workingSide(checkout, rel)]);
  return { path: rel, before, after };
}

async function conflictedFiles(checkout: GitCheckout): Promise<string[]> {
  return splitNul((await gitIn(checkout, ["diff", "--name-only", "--diff-filter=U", "-z"])).stdout);
}

/** Files git names under "would be overwritten by merge" (a dirty main checkout). */
function overwrittenFiles(stderr: string): string[] {
  const out: string[] = [];
  let listing = false;
  for (const line of stderr.split("\n")) {
    if (/would be overwritten|untracked working tree files would be/.test(line)) listing = true;
    else if (listing && /^\s+\S/.test(line)) out.push(line.trim());
    else listing = false;
  }
  return out;
}

/** The worktree's uncommitted work, committed on its branch as `who` (so a merge takes all of it). */
async function commitPendingWork(checkout: GitCheckout, who: GitIdentity, sessionId: string): Promise<void> {
  const status = await statusOfCheckout(checkout);
  if (status.files.length === 0) return;
  await gitInOk(checkout, ["add", "-A"], "Cannot stage the worktree's changes");
  await gitInOk(checkout, ["commit", "--no-verify", "-q", "-m", `Session ${sessionId}: work in its worktree`], "Cannot commit the worktree's changes", identityEnv(who));
}

/**
 * Brings the session's branch back into its base in the workspace's checkout: a merge commit,
 * or a rebase of the branch onto the base then a fast-forward. Conflicts abort the attempt
 * (both checkouts as before) and are reported as `WorktreeConflictError`.
 */
export async function mergeSessionWorktree(
  ws: WorkspaceRoot,
  wt: SessionWorktree,
  input: { strategy: WorktreeMergeStrategy; who: GitIdentity; sessionId: string },
): Promise<{ commit: string; strategy: WorktreeMergeStrategy }> {
  const main = await requireCheckout(ws);
  if (main.customMergeDriver) throw new AppError(ErrorCode.conflict, "The repository's settings name a custom merge driver; Conduit does not run it. Merge this branch outside Conduit.");
  const tree = await openWorktree(ws, wt);
  const mainStatus = await statusOfCheckout(main);
  if (mainStatus.branch !== wt.baseBranch) {
    throw new AppError(ErrorCode.conflict, `The workspace is on ${mainStatus.branch ?? "a detached HEAD"}, not ${wt.baseBranch}: switch it back to merge this session's branch.`);
  }
  await commitPendingWork(tree, input.who, input.sessionId);
  const env = identityEnv(input.who);
  if (input.strategy === "rebase") {
    const rebase = await gitIn(tree, ["rebase", "--no-autosquash", wt.baseBranch], env);
    if (rebase.code !== 0) {
      const conflicts = await conflictedFiles(tree);
      await gitIn(tree, ["rebase", "--abort"]);
      throw new WorktreeConflictError(`Rebasing ${wt.branch} onto ${wt.baseBranch} stopped on conflicts; it was aborted and nothing changed.`, conflicts);
    }
    const ff = await gitIn(main, ["merge", "--ff-only", "-q", wt.branch], env);
    if (ff.code !== 0) {
      throw new WorktreeConflictError(`Cannot fast-forward ${wt.baseBranch}: ${firstErrorLine(ff.stderr)}`, overwrittenFiles(ff.stderr));
    }
  } else {
    const merge = await gitIn(main, ["merge", "--no-ff", "--no-edit", "-q", "-m", `Merge ${wt.branch} (session ${input.sessionId})`, wt.branch], env);
    if (merge.code !== 0) {
      const midMerge = (await gitIn(main, ["rev-parse", "-q", "--verify", "MERGE_HEAD"])).code === 0;
      if (midMerge) {
        const conflicts = await conflictedFiles(main);
        await gitIn(main, ["merge", "--abort"]);
        throw new WorktreeConflictError(`Merging ${wt.branch} into ${wt.baseBranch} stopped on conflicts; the merge was aborted and nothing changed.`, conflicts);
      }
      throw new WorktreeConflictError(`Cannot merge ${wt.branch}: ${firstErrorLine(merge.stderr)}`, overwrittenFiles(merge.stderr));
    }
  }
  const head = (await gitInOk(main, ["rev-parse", "HEAD"], "Cannot read the merged commit")).toString("utf8").trim();
  return { commit: head, strategy: input.strategy };
}

/**
 * Removes a session's worktree and its branch (uncommitted work in it is gone). Safe to call
 * when either is already gone; the session-delete code calls this for sessions that have one.
 */
export async function removeSessionWorktree(ws: WorkspaceRoot, wt: Pick<SessionWorktree, "path" | "branch">): Promise<void> {
  const root = await realRoot(ws);
  if (!isInside(root, wt.path) || wt.path === root) throw new AppError(ErrorCode.forbidden, "The session's worktree is not inside its workspace.");
  const main = await findCheckout(ws);
  if (main) {
    await gitIn(main, ["worktree", "remove", "--force", "--force", wt.path]);
    await gitIn(main, ["worktree", "prune"]);
    if (/^conduit\/[A-Za-z0-9]+$/.test(wt.branch)) await gitIn(main, ["branch", "-D", "-q", wt.branch]);
  }
  // what git did not remove (a folder no longer registered): only a real folder inside the workspace
  const real = await realpath(wt.path).catch(() => undefined);
  if (real !== undefined && real === wt.path && isInside(root, real)) await rm(real, { recursive: true, force: true });
}
