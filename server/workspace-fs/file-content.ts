/**
 * Reading workspace files for people: regular files only (a FIFO, device or socket is never
 * opened for reading), a size cap on what goes to a browser, binary detection, and the sha256
 * of the bytes as the file's version (what a save must name to overwrite it).
 */
import type { FileRead } from "@/server/shared/wire/files";
import { createHash } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { resolveExisting, type WorkspaceRoot } from "./workspace-path";

/** The most a browser is sent of one file (and may save back). */
export const maxBrowserFileBytes = 5 * 1024 * 1024;
/**
 * Above this a file is not hashed when a person opens it (it cannot be shown or saved anyway):
 * its version is its identity and change time, `stat:…`, so opening a huge file costs no CPU.
 */
export const maxHashedBytes = 64 * 1024 * 1024;
/** How much of the start of a file decides whether it is binary. */
export const binarySniffBytes = 8 * 1024;

/** A file's version: the hex sha256 of its bytes. */
export function contentVersion(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** True when the bytes look binary: a NUL byte, or invalid UTF-8 (a sequence cut at the end is fine). */
export function looksBinary(sample: Uint8Array): boolean {
  if (sample.includes(0)) return true;
  try {
    new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(sample, { stream: true });
    return false;
  } catch {
    return true;
  }
}

export type { FileRead } from "@/server/shared/wire/files";

/** Versions of unchanged files, by identity and change time, so polling does not re-hash. */
const versionCache = new Map<string, { stamp: string; version: string }>();
const versionCacheMax = 2000;

function stampOf(st: Stats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

function remember(real: string, st: Stats, version: string): void {
  if (versionCache.size >= versionCacheMax) versionCache.delete(versionCache.keys().next().value!);
  versionCache.set(real, { stamp: stampOf(st), version });
}

/** Opens a contained regular file without following a last-moment symlink or blocking on a FIFO. */
async function openRegular(ws: WorkspaceRoot, rel: string): Promise<{ real: string; handle: FileHandle; st: Stats }> {
  const { real } = await resolveExisting(ws, rel);
  let handle: FileHandle;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    throw new AppError(ErrorCode.notFound, `Cannot open ${rel}.`);
  }
  const st = await handle.stat();
  if (!st.isFile()) {
    await handle.close();
    throw new AppError(ErrorCode.invalidPayload, st.isDirectory() ? `${rel} is a folder.` : `${rel} is not a regular file; Conduit does not read it.`);
  }
  return { real, handle, st };
}

async function hashHandle(handle: FileHandle): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of handle.createReadStream({ autoClose: false, start: 0 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** A file's current version (cheap when unchanged since the last look), for polling. */
export async function readFileVersion(ws: WorkspaceRoot, rel: string): Promise<{ path: string; size: number; version: string }> {
  const { real, handle, st } = await openRegular(ws, rel);
  try {
    const cached = versionCache.get(real);
    if (cached && cached.stamp === stampOf(st)) return { path: rel, size: st.size, version: cached.version };
    if (st.size > maxHashedBytes) return { path: rel, size: st.size, version: `stat:${stampOf(st)}` };
    const version = await hashHandle(handle);
    remember(real, st, version);
    return { path: rel, size: st.size, version };
  } finally {
    await handle.close();
  }
}

/**
 * Reads a file for a browser: text up to `maxBytes` comes with its content; binary or larger
 * files come with size and version only.
 */
export async function readWorkspaceFile(ws: WorkspaceRoot, rel: string, maxBytes = maxBrowserFileBytes): Promise<FileRead> {
  const { real, handle, st } = await openRegular(ws, rel);
  try {
    if (st.size > maxBytes) {
      const version = st.size > maxHashedBytes ? `stat:${stampOf(st)}` : await hashHandle(handle);
      remember(real, st, version);
      return { path: rel, size: st.size, version, kind: "too_large" };
    }
    const bytes = await handle.readFile();
    const version = contentVersion(bytes);
    remember(real, st, version);
    if (looksBinary(bytes.subarray(0, binarySniffBytes))) return { path: rel, size: bytes.length, version, kind: "binary" };
    let content: string;
    try {
      content = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      // valid at the start, broken later: saving a lossy decoding would corrupt the file
      return { path: rel, size: bytes.length, version, kind: "binary" };
    }
    return { path: rel, size: bytes.length, version, kind: "text", content };
  } finally {
    await handle.close();
  }
}
