/**
 * One file of a repository against HEAD (or against any commit): the committed blob read with
 * `git cat-file` (no filters, no textconv: bytes as stored) and the working file read through
 * `server/workspace-fs` (containment, regular files only). Both sides capped like the editor.
 */
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { GitFileDiff, GitFileSide } from "@/server/shared/wire/git";
import { looksBinary, maxBrowserFileBytes, binarySniffBytes, readWorkspaceFile } from "@/server/workspace-fs/file-content";
import { parseRelativePath, type WorkspaceRoot } from "@/server/workspace-fs/workspace-path";
import { gitIn, requireCheckout, type GitCheckout } from "./open-repository";

/** A blob's bytes as a diff side. */
export function sideOfBytes(bytes: Buffer): GitFileSide {
  if (bytes.length > maxBrowserFileBytes) return { kind: "too_large", size: bytes.length };
  if (looksBinary(bytes.subarray(0, binarySniffBytes))) return { kind: "binary", size: bytes.length };
  try {
    return { kind: "text", content: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    return { kind: "binary", size: bytes.length };
  }
}

/** The file as committed at `rev` (a commit id or `HEAD`), or absent. */
export async function committedSide(checkout: GitCheckout, rev: string, rel: string): Promise<GitFileSide> {
  const spec = `${rev}:${rel}`;
  const size = await gitIn(checkout, ["cat-file", "-s", spec]);
  if (size.code !== 0) return { kind: "absent" };
  const bytes = Number(size.stdout.toString("utf8").trim());
  if (bytes > maxBrowserFileBytes) return { kind: "too_large", size: bytes };
  const blob = await gitIn(checkout, ["cat-file", "blob", spec]);
  if (blob.code !== 0) return { kind: "absent" };
  return sideOfBytes(blob.stdout);
}

/** The file in the working tree of `checkout`, or absent. */
export async function workingSide(checkout: GitCheckout, rel: string): Promise<GitFileSide> {
  const root: WorkspaceRoot = { root: checkout.topLevel, excluded: checkout.excluded };
  try {
    const read = await readWorkspaceFile(root, rel);
    return read.kind === "text" ? { kind: "text", content: read.content } : { kind: read.kind, size: read.size };
  } catch (err) {
    if (err instanceof AppError && err.code === ErrorCode.notFound) return { kind: "absent" };
    throw err;
  }
}

/** `rel` against HEAD in the workspace's repository (a rename's old name gives the before side). */
export async function readGitFileDiff(ws: WorkspaceRoot, relInput: string, origInput?: string): Promise<GitFileDiff> {
  const rel = parseRelativePath(relInput);
  if (rel === "") throw new AppError(ErrorCode.invalidPayload, "Name a file.");
  const orig = origInput === undefined ? rel : parseRelativePath(origInput);
  const checkout = await requireCheckout(ws);
  const [before, after] = await Promise.all([committedSide(checkout, "HEAD", orig), workingSide(checkout, rel)]);
  return { path: rel, before, after };
}
