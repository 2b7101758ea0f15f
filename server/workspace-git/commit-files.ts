/**
 * Stage and commit selected files of a repository workspace, author and committer the Conduit
 * user; discard one file's working change. Every path is checked by `server/workspace-fs`
 * containment before git sees it, and must be one the status lists as changed.
 */
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { GitCommitResult, GitFileStatus } from "@/server/shared/wire/git";
import { parseRelativePath, resolveEntry, resolveNew, type WorkspaceRoot } from "@/server/workspace-fs/workspace-path";
import { deleteWorkspaceEntry } from "@/server/workspace-fs/write-file";
import { gitIn, gitInOk, requireCheckout, type GitCheckout } from "./open-repository";
import { maxCommitPaths } from "./git-limits";
import { statusOfCheckout } from "./git-status";

/** Who a commit is by. */
export interface GitIdentity {
  name: string;
  email: string;
}

export { maxCommitPaths } from "./git-limits";

/** The environment that makes `who` the author and committer (git strips `<>` and newlines anyway). */
export function identityEnv(who: GitIdentity): Record<string, string> {
  const email = who.email.replace(/[<>\s]/g, "");
  const name = who.name.replace(/[<>\0\r\n]/g, "").trim() || email.split("@")[0] || "Conduit user";
  return { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email };
}

/** A relative path, checked and contained (the entry itself, or where it would be if deleted). */
export async function containedPath(ws: WorkspaceRoot, input: string): Promise<string> {
  const rel = parseRelativePath(input);
  if (rel === "") throw new AppError(ErrorCode.invalidPayload, "Name a file, not the workspace root.");
  try {
    await resolveEntry(ws, rel);
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== ErrorCode.notFound) throw err;
    // a deleted file: where it was must still be inside
    await resolveNew(ws, rel);
  }
  return rel;
}

function rootOf(checkout: GitCheckout): WorkspaceRoot {
  return { root: checkout.topLevel, excluded: checkout.excluded };
}

/** Commits exactly `paths` (staging them first, other staged changes left staged) as `author`. */
export async function commitWorkspaceFiles(ws: WorkspaceRoot, input: { paths: readonly string[]; message: string; author: GitIdentity }): Promise<GitCommitResult> {
  const checkout = await requireCheckout(ws);
  const message = input.message.trim();
  if (message === "") throw new AppError(ErrorCode.conflict, "Write a commit message first.");
  if (input.paths.length === 0) throw new AppError(ErrorCode.conflict, "Nothing is staged: select at least one changed file.");
  if (input.paths.length > maxCommitPaths) throw new AppError(ErrorCode.invalidPayload, `Select at most ${maxCommitPaths} files for one commit.`);
  const root = rootOf(checkout);
  const paths = [...new Set(await Promise.all(input.paths.map((p) => containedPath(root, p))))];
  const status = await statusOfCheckout(checkout);
  const changed = new Set(status.files.flatMap((f) => (f.origPath ? [f.path, f.origPath] : [f.path])));
  const unchanged = paths.filter((p) => !changed.has(p));
  if (unchanged.length > 0) throw new AppError(ErrorCode.conflict, `Nothing to commit in ${unchanged.slice(0, 5).join(", ")}: no change since the last commit.`);
  const env = identityEnv(input.author);
  await gitInOk(checkout, ["add", "-A", "--", ...paths], "Cannot stage the files");
  const commit = await gitIn(checkout, ["commit", "--no-verify", "--only", "-m", message, "--", ...paths], env);
  if (commit.code !== 0) {
    const text = commit.stdout.toString("utf8") + commit.stderr;
    if (/nothing (added )?to commit|no changes added/i.test(text)) throw new AppError(ErrorCode.conflict, "Nothing is staged: the selected files have no change to commit.");
    throw new AppError(ErrorCode.conflict, `The commit failed: ${text.trim().split("\n")[0]?.slice(0, 300) ?? "git failed"}`);
  }
  const head = (await gitInOk(checkout, ["rev-parse", "HEAD"], "Cannot read the new commit")).toString("utf8").trim();
  return { commit: head, branch: status.branch, paths };
}

/** What discarding did: the committed file restored, or a file HEAD does not have deleted. */
export interface DiscardResult {
  path: string;
  action: "restored" | "deleted";
}

async function inHead(checkout: GitCheckout, rel: string): Promise<boolean> {
  return (await gitIn(checkout, ["cat-file", "-e", `HEAD:${rel}`])).code === 0;
}

/**
 * Puts one file back as HEAD has it (index and working tree). A file HEAD does not have
 * (untracked, newly added, a rename's new name) is deleted — only with `confirmDelete`.
 */
export async function discardWorkspaceChange(ws: WorkspaceRoot, input: { path: string; confirmDelete: boolean }): Promise<DiscardResult> {
  const checkout = await requireCheckout(ws);
  const root = rootOf(checkout);
  const rel = await containedPath(root, input.path);
  const status = await statusOfCheckout(checkout);
  const entry: GitFileStatus | undefined = status.files.find((f) => f.path === rel);
  if (!entry) throw new AppError(ErrorCode.conflict, `${rel} has no change to discard.`);
  if (entry.staged === "unmerged") throw new AppError(ErrorCode.conflict, `${rel} is in a merge conflict; resolve or abort the merge first.`);
  if (status.head !== null && (await inHead(checkout, rel))) {
    await gitInOk(checkout, ["restore", "--source=HEAD", "--staged", "--worktree", "--", rel], `Cannot restore ${rel}`);
    return { path: rel, action: "restored" };
  }
  if (!input.confirmDelete) {
    throw new AppError(ErrorCode.conflict, `${rel} is not in the last commit: discarding its change deletes the file. Confirm to delete it.`);
  }
  if (entry.origPath) {
    const orig = await containedPath(root, entry.origPath);
    await gitInOk(checkout, ["restore", "--source=HEAD", "--staged", "--worktree", "--", orig], `Cannot restore ${orig}`);
  }
  if (!entry.untracked) await gitInOk(checkout, ["rm", "--cached", "-q", "--ignore-unmatch", "--", rel], `Cannot unstage ${rel}`);
  try {
    await deleteWorkspaceEntry(root, rel);
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== ErrorCode.notFound) throw err;
  }
  return { path: rel, action: "deleted" };
}
