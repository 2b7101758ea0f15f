/**
 * Changing workspace files on a person's behalf: save over a known version (a changed file is
 * a conflict carrying what is there now, never overwritten), create, rename, delete. Writes go
 * to a temporary file beside the target and are renamed over it, so a reader never sees half.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, mkdir, open, rename, rm, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { FileConflictError } from "@/server/shared/errors/workspace-errors";
import { contentVersion, maxBrowserFileBytes, readWorkspaceFile } from "./file-content";
import { relativeTo, resolveEntry, resolveExisting, resolveNew, type WorkspaceRoot } from "./workspace-path";

export { FileConflictError } from "@/server/shared/errors/workspace-errors";

/** Saves run one at a time per file in this process, so two saves cannot both pass the check. */
const saving = new Map<string, Promise<unknown>>();

async function serialised<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const before = saving.get(key) ?? Promise.resolve();
  const run = before.then(fn, fn);
  const settled = run.catch(() => undefined);
  saving.set(key, settled);
  try {
    return await run;
  } finally {
    if (saving.get(key) === settled) saving.delete(key);
  }
}

/**
 * Writes `content` to the real path `real` through a temp file beside it (created exclusively,
 * never through a link) and a rename, so readers see the old bytes or the new, never half.
 */
export async function writeAtomically(real: string, content: string | Uint8Array, mode?: number): Promise<void> {
  const tmp = path.join(path.dirname(real), `.${path.basename(real)}.conduit-${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode ?? 0o644);
  try {
    await (typeof content === "string" ? handle.writeFile(content, "utf8") : handle.writeFile(content));
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, real);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

function checkSize(content: string): void {
  if (Buffer.byteLength(content, "utf8") > maxBrowserFileBytes) {
    throw new AppError(ErrorCode.invalidPayload, `The file is larger than ${maxBrowserFileBytes / 1024 / 1024} MB; Conduit does not save it.`);
  }
}

/**
 * Saves text over version `baseVersion` (or as a new file when `baseVersion` is null).
 * Anything else on disk is a `FileConflictError` with the current content.
 */
export async function saveWorkspaceFile(
  ws: WorkspaceRoot,
  rel: string,
  content: string,
  baseVersion: string | null,
): Promise<{ path: string; version: string; size: number }> {
  checkSize(content);
  if (baseVersion === null) {
    const { real } = await resolveNew(ws, rel).catch(async (err: unknown) => {
      if (err instanceof AppError && err.code === ErrorCode.conflict) {
        throw new FileConflictError(rel, await readWorkspaceFile(ws, rel).catch(() => null));
      }
      throw err;
    });
    return serialised(real, async () => {
      await mkdir(path.dirname(real), { recursive: true });
      await writeNew(real, content, rel, ws);
      return { path: rel, version: contentVersion(content), size: Buffer.byteLength(content) };
    });
  }
  const { real } = await resolveExisting(ws, rel).catch(async (err: unknown) => {
    if (err instanceof AppError && err.code === ErrorCode.notFound) throw new FileConflictError(rel, null);
    throw err;
  });
  return serialised(real, async () => {
    const current = await readWorkspaceFile(ws, rel);
    if (current.version !== baseVersion) throw new FileConflictError(rel, current);
    if (current.kind !== "text") throw new AppError(ErrorCode.invalidPayload, `${rel} is not a text file Conduit can edit.`);
    const mode = (await stat(real)).mode & 0o7777;
    await writeAtomically(real, content, mode);
    return { path: rel, version: contentVersion(content), size: Buffer.byteLength(content) };
  });
}

async function writeNew(real: string, content: string, rel: string, ws: WorkspaceRoot): Promise<void> {
  try {
    await writeFile(real, content, { encoding: "utf8", flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new FileConflictError(rel, await readWorkspaceFile(ws, rel).catch(() => null));
    throw err;
  }
}

/** Creates an empty folder or a file (missing parent folders too). An existing path is `conflict`. */
export async function createWorkspaceEntry(
  ws: WorkspaceRoot,
  rel: string,
  kind: "file" | "dir",
  content = "",
): Promise<{ path: string; kind: "file" | "dir"; version?: string }> {
  checkSize(content);
  const { real } = await resolveNew(ws, rel);
  await mkdir(kind === "dir" ? real : path.dirname(real), { recursive: true });
  if (kind === "dir") return { path: rel, kind };
  try {
    await writeFile(real, content, { encoding: "utf8", flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new AppError(ErrorCode.conflict, `${rel} already exists.`);
    throw err;
  }
  return { path: rel, kind, version: contentVersion(content) };
}

/** Renames (moves) a file or folder inside the workspace; the target must not exist. */
export async function renameWorkspaceEntry(ws: WorkspaceRoot, from: string, to: string): Promise<{ from: string; to: string }> {
  const source = await resolveEntry(ws, from);
  const target = await resolveNew(ws, to);
  const rel = relativeTo(source.root, target.real);
  if ((rel + "/").startsWith(relativeTo(source.root, source.real) + "/")) {
    throw new AppError(ErrorCode.invalidPayload, "A folder cannot move into itself.");
  }
  await mkdir(path.dirname(target.real), { recursive: true });
  // rename(2) replaces an existing target: check again just before it
  if (await lstat(target.real).catch(() => undefined)) throw new AppError(ErrorCode.conflict, `${to} already exists.`);
  await rename(source.real, target.real);
  return { from, to };
}

/** Deletes a file, a symlink (never its target) or a folder with everything in it; never the root. */
export async function deleteWorkspaceEntry(ws: WorkspaceRoot, rel: string): Promise<{ path: string; kind: "file" | "dir" | "other" }> {
  const { real } = await resolveEntry(ws, rel);
  const st = await lstat(real);
  // rm does not follow symlinks inside the folder it removes
  await rm(real, { recursive: st.isDirectory(), force: false });
  return { path: rel, kind: st.isDirectory() ? "dir" : st.isFile() ? "file" : "other" };
}
