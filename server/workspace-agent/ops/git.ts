/**
 * A workspace's own repository, run inside its git door (`server/workspace-git`): the Git
 * panel's status, diffs, commits and discards, and sessions' worktrees. The repository's
 * `.git/config` may name drivers; whatever of them `guardOverrides` does not void runs here,
 * inside the sandbox, reaching nothing but this workspace.
 */
import { z } from "zod";
import { commitWorkspaceFiles, discardWorkspaceChange } from "@/server/workspace-git/commit-files";
import { readGitFileDiff } from "@/server/workspace-git/file-diff";
import { maxCommitPaths } from "@/server/workspace-git/git-limits";
import { readGitStatus } from "@/server/workspace-git/git-status";
import { findCheckout } from "@/server/workspace-git/open-repository";
import { createSessionWorktree, listWorktreeChanges, mergeSessionWorktree, readWorktreeFileDiff, removeSessionWorktree } from "@/server/workspace-git/session-worktree";
import { defineOp, workspaceOf } from "./define";

const rel = z.string().max(4096);
const sessionId = z.string().min(1).max(200);
const branch = z.string().min(1).max(512);
/** A session's worktree as its row stores it (the path is checked inside the workspace by the git layer). */
const worktree = z.object({ path: z.string().min(2).max(4096), branch, baseBranch: branch });
const identity = z.object({ name: z.string().max(1000), email: z.string().max(1000) });

export const gitOps = {
  "git.status": defineOp("git", z.object({}), (_i, ctx) => readGitStatus(workspaceOf(ctx))),
  "git.isRepository": defineOp("git", z.object({}), async (_i, ctx) => (await findCheckout(workspaceOf(ctx))) !== undefined),
  "git.diff": defineOp("git", z.object({ path: rel, orig: rel.optional() }), (i, ctx) => readGitFileDiff(workspaceOf(ctx), i.path, i.orig)),
  "git.commit": defineOp("git", z.object({ paths: z.array(rel).max(maxCommitPaths), message: z.string().max(10_000), author: identity }), (i, ctx) =>
    commitWorkspaceFiles(workspaceOf(ctx), { paths: i.paths, message: i.message, author: i.author }),
  ),
  "git.discard": defineOp("git", z.object({ path: rel, confirmDelete: z.boolean() }), (i, ctx) =>
    discardWorkspaceChange(workspaceOf(ctx), { path: i.path, confirmDelete: i.confirmDelete }),
  ),
  "git.worktree.create": defineOp("git", z.object({ sessionId }), (i, ctx) => createSessionWorktree(workspaceOf(ctx), i.sessionId)),
  "git.worktree.changes": defineOp("git", z.object({ wt: worktree }), (i, ctx) => listWorktreeChanges(workspaceOf(ctx), i.wt)),
  "git.worktree.diff": defineOp("git", z.object({ wt: worktree, path: rel }), (i, ctx) => readWorktreeFileDiff(workspaceOf(ctx), i.wt, i.path)),
  "git.worktree.merge": defineOp(
    "git",
    z.object({ wt: worktree, strategy: z.enum(["merge", "rebase"]), who: identity, sessionId }),
    (i, ctx) => mergeSessionWorktree(workspaceOf(ctx), i.wt, { strategy: i.strategy, who: i.who, sessionId: i.sessionId }),
  ),
  "git.worktree.remove": defineOp("git", z.object({ wt: worktree.pick({ path: true, branch: true }) }), (i, ctx) => removeSessionWorktree(workspaceOf(ctx), i.wt)),
};
