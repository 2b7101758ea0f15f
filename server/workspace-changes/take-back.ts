/**
 * Taking a session's changes back, on files of the work tree: a file back to a snapshot's
 * version (or removed when the snapshot did not have it), one hunk of a change reversed on the
 * current text, and the plan of a rewind (which files go back, with what counts, and which of
 * them changed since the session's latest snapshot: conflicts, left alone unless confirmed).
 * Every write is contained in the workspace (`server/workspace-fs`'s real-path rules) and goes
 * to a temporary file renamed over the target.
 */
import { lstat, mkdir, readFile, symlink, unlink } from "node:fs/promises";
import path from "node:path";
import { applyPatch, type StructuredPatch } from "diff";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { ChangedFile, FileSide, RewindPreview } from "@/server/shared/wire/changes";
import { maxDiffedFileBytes } from "@/server/shared/wire/changes";
import { looksBinary } from "@/server/workspace-fs/file-content";
import { parseRelativePath, resolveEntry, resolveNew, type WorkspaceRoot } from "@/server/workspace-fs/workspace-path";
import { writeAtomically } from "@/server/workspace-fs/write-file";
import { hunksOf } from "./hunks";
import type { ShadowRepo } from "./shadow-repo";

export { hunksOf } from "./hunks";

/** Writes `path` as it is in `commit` (removed when absent there). Returns whether it changed anything. */
export async function restoreFile(repo: ShadowRepo, ws: WorkspaceRoot, commit: string, file: string): Promise<boolean> {
  const rel = parseRelativePath(file);
  const blob = await repo.stat(commit, rel);
  if (!blob) return removeFile(ws, rel);
  const bytes = (await repo.read(commit, rel)) ?? Buffer.alloc(0);
  if (blob.mode === "120000") {
    const { real } = await resolveNew(ws, rel).catch(() => resolveEntry(ws, rel));
    await unlink(real).catch(() => undefined);
    await symlink(bytes.toString("utf8"), real);
    return true;
  }
  await writeContained(ws, rel, bytes, blob.mode === "100755" ? 0o755 : 0o644);
  return true;
}

/** A file's text now in the work tree, or undefined when it is not a regular file there. */
export async function readCurrent(ws: WorkspaceRoot, file: string): Promise<Buffer | undefined> {
  try {
    const { real } = await resolveEntry(ws, parseRelativePath(file));
    const info = await lstat(real);
    if (!info.isFile()) return undefined;
    return await readFile(real);
  } catch {
    return undefined;
  }
}

/** One side of a diff, read from a snapshot. */
export async function snapshotSide(repo: ShadowRepo, commit: string, file: string): Promise<FileSide> {
  const blob = await repo.stat(commit, file);
  if (!blob) return { kind: "absent" };
  if (blob.size > maxDiffedFileBytes) return { kind: "too_large", size: blob.size };
  const bytes = (await repo.read(commit, file)) ?? Buffer.alloc(0);
  return sideOf(bytes);
}

/** A side from bytes: text, or binary (NUL or invalid UTF-8). */
export function sideOf(bytes: Buffer): FileSide {
  if (bytes.length > maxDiffedFileBytes) return { kind: "too_large", size: bytes.length };
  if (looksBinary(bytes)) return { kind: "binary", size: bytes.length };
  return { kind: "text", content: bytes.toString("utf8") };
}

/**
 * Reverses hunk `index` of the change `before → after` on the file's current text. The file
 * may have changed elsewhere since (the patch is placed by its context); if the hunk's own lines
 * changed, nothing is written and the answer is a conflict.
 */
export async function revertHunk(
  ws: WorkspaceRoot,
  file: string,
  before: FileSide,
  after: FileSide,
  index: number,
): Promise<void> {
  const { patch } = hunksOf(before, after);
  if (!patch) throw new AppError(ErrorCode.invalidPayload, `${file} is not text on both sides; revert the whole file instead.`);
  const hunk = patch.hunks[index];
  if (!hunk) throw new AppError(ErrorCode.notFound, `${file} has no hunk ${index + 1} in this change.`);
  const current = await readCurrent(ws, file);
  const text = current === undefined ? "" : current.toString("utf8");
  if (current !== undefined && looksBinary(current)) throw new AppError(ErrorCode.conflict, `${file} is binary now; its hunk cannot be reverted.`);
  const reversed: StructuredPatch = {
    ...patch,
    hunks: [
      {
        oldStart: hunk.newStart,
        oldLines: hunk.newLines,
        newStart: hunk.oldStart,
        newLines: hunk.oldLines,
        lines: hunk.lines.map((line) => (line.startsWith("+") ? `-${line.slice(1)}` : line.startsWith("-") ? `+${line.slice(1)}` : line)),
      },
    ],
  };
  const result = applyPatch(text, reversed);
  if (result === false) {
    throw new AppError(ErrorCode.conflict, `${file} changed where this hunk is since the change; nothing was written. Revert the whole file or edit it by hand.`);
  }
  // A reverted hunk that leaves an added file empty leaves it empty: deleting is the file revert's job.
  await writeContained(ws, parseRelativePath(file), Buffer.from(result, "utf8"), undefined);
}

/**
 * What rewinding to `target` changes, given the work tree now (`current`, a fresh snapshot) and
 * the session's latest snapshot (`latest`): files differing between `current` and `target`;
 * those also differing between `latest` and `current` changed after the session's last turn.
 */
export async function planRewind(
  repo: ShadowRepo,
  commits: { target: string; current: string; latest: string | null },
  promptSeq: number,
): Promise<RewindPreview> {
  const files = await repo.diff(commits.current, commits.target);
  const since = commits.latest && commits.latest !== commits.current ? await repo.diff(commits.latest, commits.current) : [];
  const changedSince = new Set(since.map((f) => f.path));
  return {
    promptSeq,
    files,
    insertions: files.reduce((n, f) => n + f.insertions, 0),
    deletions: files.reduce((n, f) => n + f.deletions, 0),
    conflicts: files.filter((f) => changedSince.has(f.path)).map((f) => f.path),
  };
}

/** Sums of a file list. */
export function totalsOf(files: readonly ChangedFile[]): { insertions: number; deletions: number } {
  return {
    insertions: files.reduce((n, f) => n + f.insertions, 0),
    deletions: files.reduce((n, f) => n + f.deletions, 0),
  };
}

async function removeFile(ws: WorkspaceRoot, rel: string): Promise<boolean> {
  let real: string;
  try {
    ({ real } = await resolveEntry(ws, rel));
  } catch (err) {
    // already gone is fine; a path leading outside is not
    if (err instanceof AppError && err.code === ErrorCode.notFound) return false;
    throw err;
  }
  const info = await lstat(real).catch(() => undefined);
  if (!info) return false;
  if (info.isDirectory()) throw new AppError(ErrorCode.conflict, `${rel} is a folder now; it was left alone.`);
  await unlink(real);
  return true;
}

async function writeContained(ws: WorkspaceRoot, rel: string, bytes: Buffer, mode: number | undefined): Promise<void> {
  const dir = path.posix.dirname(rel);
  if (dir !== ".") await ensureFolder(ws, dir);
  const { real } = await resolveNew(ws, rel).catch(async (err: unknown) => {
    // an existing entry: contained the same way, but may be replaced
    const existing = await resolveEntry(ws, rel).catch(() => undefined);
    if (!existing) throw err;
    return existing;
  });
  const info = await lstat(real).catch(() => undefined);
  if (info?.isDirectory()) throw new AppError(ErrorCode.conflict, `${rel} is a folder now; it was left alone.`);
  await writeAtomically(real, bytes, mode ?? (info ? info.mode & 0o777 : 0o644));
}

/** Creates the folders of `dir` inside the workspace, one contained level at a time. */
async function ensureFolder(ws: WorkspaceRoot, dir: string): Promise<void> {
  const parts = dir.split("/");
  for (let i = 1; i <= parts.length; i++) {
    const rel = parts.slice(0, i).join("/");
    const existing = await resolveEntry(ws, rel).catch(() => undefined);
    if (existing) {
      const info = await lstat(existing.real);
      if (info.isDirectory()) continue;
      throw new AppError(ErrorCode.conflict, `${rel} is not a folder; ${dir} cannot be restored under it.`);
    }
    const { real } = await resolveNew(ws, rel);
    await mkdir(real).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "EEXIST") throw err;
    });
  }
}
