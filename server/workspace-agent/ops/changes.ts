/**
 * The Changes view's capture and take-backs, run inside a workspace's files door: snapshots of a
 * work tree into its shadow repository (`DATA_DIR/shadow/<workspaceId>/<repoKey>.git`, the
 * door's `shadowDir`), the diff of two snapshots, a file's two sides, and the take-backs (a file
 * or a hunk reverted, a rewind) between two snapshots of their own.
 *
 * The door holds the repository objects and the work-tree watchers (`change-watcher.ts`) as a
 * cache: a door that ended (idle, crashed) starts with none, and its first snapshot of each
 * work tree scans it whole, as a repository object without a trusted watcher always does. The
 * snapshots ref on disk is the only record of the latest snapshot; nothing here is the only copy
 * of anything.
 *
 * What callers name is checked here, the boundary: a repository key must be this workspace's
 * (its id, or `<id>-wt-<session>` for a session's own worktree), and a work tree must be the
 * workspace or a folder inside it (real paths, outside its nested workspaces).
 */
import { realpath } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { ChangedFile, FileSide, RewindPreview } from "@/server/shared/wire/changes";
import { WorkTreeWatchers, type WatchLimits } from "@/server/workspace-changes/change-watcher";
import { ShadowRepo } from "@/server/workspace-changes/shadow-repo";
import { planRewind, restoreFile, revertHunk, snapshotSide } from "@/server/workspace-changes/take-back";
import { isInside, parseRelativePath, type WorkspaceRoot } from "@/server/workspace-fs/workspace-path";
import { defineOp, workspaceOf, type DoorContext } from "./define";

const repoKeyPattern = /^[A-Za-z0-9_-]{1,140}$/;

const ZRepoKey = z.string().regex(repoKeyPattern, "a shadow repository key");
const ZWorkTree = z
  .string()
  .min(2)
  .max(4096)
  .refine((p) => p.startsWith("/") && !p.includes("\0"), "an absolute path");
const ZCommit = z.string().regex(/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/, "a commit id");
const ZFile = z.string().min(1).max(4096);
const ZMessage = z.string().max(500);
const ms = z.number().int().min(0).max(24 * 3_600_000);
/** The watchers' limits (`WatchLimits`), or false: no watcher, every snapshot scans. */
const ZWatch = z
  .union([
    z.literal(false),
    z
      .object({
        idleMs: ms,
        maxDirectories: z.number().int().min(1).max(10_000_000),
        overflowBurst: z.number().int().min(1).max(100_000_000),
        readyWaitMs: ms,
        backoffMs: ms,
      })
      .partial()
      .strict(),
  ])
  .optional();

/** A repository to read (commits only: its work tree may be gone, a discarded session worktree). */
const ZRepo = z.object({ repoKey: ZRepoKey });
/** A repository to write: what it snapshots, and the watchers it snapshots through. */
const ZWriter = ZRepo.extend({ workTree: ZWorkTree, watch: ZWatch });

/** Writers (snapshots, take-backs) and readers (diffs, sides), by repository key. */
const writers = new Map<string, ShadowRepo>();
const readers = new Map<string, ShadowRepo>();
/** The watchers of this door, one set per distinct limits asked for. */
const watcherSets = new Map<string, WorkTreeWatchers>();

/** The workspace id of this door (its shadow folder's name). */
function shadowFolderOf(ctx: DoorContext): { dir: string; workspaceId: string } {
  if (!ctx.shadowDir) throw new AppError(ErrorCode.forbidden, "This door holds no shadow repositories.");
  return { dir: ctx.shadowDir, workspaceId: path.basename(ctx.shadowDir) };
}

/** The git directory of `repoKey`, which must be this workspace's. */
function gitDirOf(ctx: DoorContext, repoKey: string): string {
  const { dir, workspaceId } = shadowFolderOf(ctx);
  if (!repoKeyPattern.test(repoKey) || (repoKey !== workspaceId && !repoKey.startsWith(`${workspaceId}-wt-`))) {
    throw new AppError(ErrorCode.forbidden, "That shadow repository is not this workspace's.");
  }
  return path.join(dir, `${repoKey}.git`);
}

/** The work tree's real path: the workspace or a folder inside it, outside its nested workspaces. */
async function workTreeOf(ctx: DoorContext, workTree: string): Promise<WorkspaceRoot> {
  const ws = workspaceOf(ctx);
  let real: string;
  try {
    real = await realpath(workTree);
  } catch {
    throw new AppError(ErrorCode.notFound, "The session's work tree is missing.");
  }
  if (!isInside(ws.root, real) || (ws.excluded ?? []).some((other) => isInside(other, real))) {
    throw new AppError(ErrorCode.forbidden, "A snapshotted work tree must lie inside the workspace.");
  }
  return { root: real, excluded: ws.excluded ?? [] };
}

function watchersOf(watch: Partial<WatchLimits> | false | undefined): WorkTreeWatchers | undefined {
  if (watch === false) return undefined;
  const key = JSON.stringify(Object.entries(watch ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)));
  let set = watcherSets.get(key);
  if (!set) {
    set = new WorkTreeWatchers(watch ?? {});
    watcherSets.set(key, set);
  }
  return set;
}

/** The writer of a repository (one object per repository in this door: its writer lock is per object). */
async function writerOf(ctx: DoorContext, input: z.output<typeof ZWriter>): Promise<{ repo: ShadowRepo; ws: WorkspaceRoot }> {
  const gitDir = gitDirOf(ctx, input.repoKey);
  const ws = await workTreeOf(ctx, input.workTree);
  let repo = writers.get(input.repoKey);
  if (!repo || repo.workTree !== ws.root) {
    repo = new ShadowRepo(gitDir, ws.root, false);
    writers.set(input.repoKey, repo);
  }
  repo.watchers = watchersOf(input.watch);
  return { repo, ws };
}

/**
 * A reader of a repository: never creates, configures or unlocks it (the web app's door reads
 * what the sidecar's writes), and reads commits only (git runs without a work tree).
 */
function readerOf(ctx: DoorContext, input: z.output<typeof ZRepo>): ShadowRepo {
  const gitDir = gitDirOf(ctx, input.repoKey);
  let repo = readers.get(input.repoKey);
  if (!repo) {
    repo = new ShadowRepo(gitDir, gitDir, true);
    readers.set(input.repoKey, repo);
  }
  return repo;
}

/** What a take-back does between its two snapshots. */
const ZTakeBackAction = z.discriminatedUnion("type", [
  /** A file back as it is in `commit` (removed when absent there). */
  z.object({ type: z.literal("file"), commit: ZCommit, file: ZFile }),
  /** Hunk `hunk` of the change `before → after` of `file`, reversed on its current text. */
  z.object({ type: z.literal("hunk"), before: ZCommit, after: ZCommit, file: ZFile, hunk: z.number().int().min(0).max(1_000_000) }),
  /** Every file back as it is in `target`; those changed since `latest` only with `includeConflicts`. */
  z.object({
    type: z.literal("rewind"),
    target: ZCommit,
    latest: ZCommit.nullable(),
    promptSeq: z.number().int().min(0),
    includeConflicts: z.boolean(),
  }),
]);

export interface TakeBackOutcome {
  /** The work tree's snapshots before and after the take-back. */
  before: string;
  after: string;
  /** What the take-back changed (the diff of the two). */
  files: ChangedFile[];
  /** Files written, and files of a rewind left alone (conflicts). */
  changed: string[];
  skipped: string[];
  /** A rewind's plan. */
  preview?: RewindPreview;
}

export const changesOps = {
  /** A snapshot of the work tree now (the latest one when nothing changed), and how it knew what changed. */
  "changes.snapshot": defineOp("files", ZWriter.extend({ message: ZMessage }), async (i, ctx) => {
    const { repo } = await writerOf(ctx, i);
    const commit = await repo.snapshot(i.message);
    return { commit, way: repo.lastWay ?? "scan" };
  }),
  /** The files that differ between two snapshots (`from` null: all of `to`). */
  "changes.diff": defineOp("files", ZRepo.extend({ from: ZCommit.nullable(), to: ZCommit }), async (i, ctx): Promise<ChangedFile[]> => {
    return readerOf(ctx, i).diff(i.from, i.to);
  }),
  /** One file as it is in two snapshots. */
  "changes.sides": defineOp(
    "files",
    ZRepo.extend({ before: ZCommit, after: ZCommit, file: ZFile }),
    async (i, ctx): Promise<{ before: FileSide; after: FileSide }> => {
      const repo = readerOf(ctx, i);
      const file = parseRelativePath(i.file);
      const [before, after] = await Promise.all([snapshotSide(repo, i.before, file), snapshotSide(repo, i.after, file)]);
      return { before, after };
    },
  ),
  /** A rewind's dry run: a snapshot of the work tree now, and what going back to `target` changes. */
  "changes.previewRewind": defineOp(
    "files",
    ZWriter.extend({ message: ZMessage, target: ZCommit, latest: ZCommit.nullable(), promptSeq: z.number().int().min(0) }),
    async (i, ctx): Promise<RewindPreview> => {
      const { repo } = await writerOf(ctx, i);
      const current = await repo.snapshot(i.message);
      return planRewind(repo, { target: i.target, current, latest: i.latest }, i.promptSeq);
    },
  ),
  /**
   * A take-back between two snapshots of the work tree (before it, after it): the writes are
   * contained in the work tree (`server/workspace-fs`'s real-path rules), never through a link.
   */
  "changes.takeBack": defineOp(
    "files",
    ZWriter.extend({ messages: z.object({ before: ZMessage, after: ZMessage }), action: ZTakeBackAction }),
    async (i, ctx): Promise<TakeBackOutcome> => {
      const { repo, ws } = await writerOf(ctx, i);
      const action = i.action;
      const before = await repo.snapshot(i.messages.before);
      let changed: string[] = [];
      const skipped: string[] = [];
      let preview: RewindPreview | undefined;
      if (action.type === "file") {
        const file = parseRelativePath(action.file);
        await restoreFile(repo, ws, action.commit, file);
        changed = [file];
      } else if (action.type === "hunk") {
        const file = parseRelativePath(action.file);
        const [beforeSide, afterSide] = await Promise.all([snapshotSide(repo, action.before, file), snapshotSide(repo, action.after, file)]);
        await revertHunk(ws, file, beforeSide, afterSide, action.hunk);
        changed = [file];
      } else {
        preview = await planRewind(repo, { target: action.target, current: before, latest: action.latest }, action.promptSeq);
        const conflicts = new Set(preview.conflicts);
        for (const file of preview.files) {
          if (conflicts.has(file.path) && !action.includeConflicts) {
            skipped.push(file.path);
            continue;
          }
          await restoreFile(repo, ws, action.target, file.path);
          changed.push(file.path);
        }
      }
      const after = await repo.snapshot(i.messages.after);
      const files = before === after ? [] : await repo.diff(before, after);
      return { before, after, files, changed, skipped, ...(preview ? { preview } : {}) };
    },
  ),
};
