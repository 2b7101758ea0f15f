/**
 * Workspace-relative paths as people and browsers send them, and real-path containment: a
 * path is resolved through every symlink before anything is read or written, and must land
 * inside the workspace's real root and outside every workspace nested in it.
 */
import { lstat, readlink, realpath } from "node:fs/promises";
import path from "node:path";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";

/** A workspace as the file layer sees it. */
export interface WorkspaceRoot {
  /** The workspace directory (resolved to its real path before use). */
  root: string;
  /** Real paths of other workspaces inside this one: never read, listed or written through this one. */
  excluded?: readonly string[];
}

/** Longest relative path accepted (bytes of the string, well below PATH_MAX). */
export const maxRelativePathLength = 1024;

/**
 * Checks and normalises a workspace-relative path: `""` (or `.`) is the root; absolute paths,
 * `..` segments, backslashes and NUL bytes are refused before any disk access.
 */
export function parseRelativePath(input: string): string {
  if (input.length > maxRelativePathLength) throw new AppError(ErrorCode.invalidPayload, "The path is too long.");
  if (input.includes("\0")) throw new AppError(ErrorCode.invalidPayload, "The path contains a NUL byte.");
  if (input.includes("\\")) throw new AppError(ErrorCode.invalidPayload, "Use / to separate folders in a path.");
  if (input.startsWith("/") || /^[A-Za-z]:/.test(input) || input.startsWith("~")) {
    throw new AppError(ErrorCode.invalidPayload, "The path must be relative to the workspace root.");
  }
  const parts = input.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) throw new AppError(ErrorCode.invalidPayload, "The path must not contain `..`.");
  return parts.join("/");
}

/** True when `candidate` is `root` or lies under it (both absolute, normalised). */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** The workspace's real root; a missing directory is `not_found`. */
export async function realRoot(ws: WorkspaceRoot): Promise<string> {
  try {
    return await realpath(ws.root);
  } catch {
    throw new AppError(ErrorCode.notFound, "The workspace directory is missing.");
  }
}

const outside = () => new AppError(ErrorCode.forbidden, "That path leads outside the workspace.");

function checkContained(ws: WorkspaceRoot, root: string, real: string): void {
  if (!isInside(root, real)) throw outside();
  for (const other of ws.excluded ?? []) if (isInside(other, real)) throw outside();
}

/** The workspace-relative form of a real path already known to be inside `root`. */
export function relativeTo(root: string, real: string): string {
  return path.relative(root, real).split(path.sep).join("/");
}

/**
 * Whether `rel` names a path that leads outside the workspace (or into a nested one) though it
 * cannot be resolved: a link whose target lies outside (in a workspace door the outside is not
 * there, so the link dangles), or a path into a nested workspace (covered by an empty folder in a
 * door). Lexical: follows each link's text, never opens what it names. So a refusal says
 * "outside" rather than "missing".
 */
async function leadsOutside(ws: WorkspaceRoot, root: string, rel: string): Promise<boolean> {
  let at = root;
  const rest = rel.split("/").filter((p) => p !== "");
  for (let hops = 0; rest.length > 0 && hops < 64; hops++) {
    const next = path.join(at, rest.shift()!);
    if (!isInside(root, next) || (ws.excluded ?? []).some((other) => isInside(other, next))) return true;
    let target: string;
    try {
      if (!(await lstat(next)).isSymbolicLink()) {
        at = next;
        continue;
      }
      target = path.resolve(path.dirname(next), await readlink(next));
    } catch {
      return false;
    }
    if (!isInside(root, target) || (ws.excluded ?? []).some((other) => isInside(other, target))) return true;
    // a link inside the workspace: go on from where it leads
    rest.unshift(...path.relative(root, target).split(path.sep).filter((p) => p !== ""));
    at = root;
  }
  return false;
}

/**
 * An existing path, followed through symlinks to its real path, which must be contained.
 * Missing → `not_found`; escaping → `forbidden`.
 */
export async function resolveExisting(ws: WorkspaceRoot, rel: string): Promise<{ root: string; real: string }> {
  const root = await realRoot(ws);
  let real: string;
  try {
    real = await realpath(/*turbopackIgnore: true*/ path.join(/*turbopackIgnore: true*/ root, rel));
  } catch {
    if (await leadsOutside(ws, root, rel)) throw outside();
    throw new AppError(ErrorCode.notFound, `No such file or folder: ${rel || "."}`);
  }
  checkContained(ws, root, real);
  return { root, real };
}

/**
 * A directory entry itself, not what it points to (rename and delete act on a symlink, never
 * its target): its parent's real path must be contained, and the entry must exist.
 */
export async function resolveEntry(ws: WorkspaceRoot, rel: string): Promise<{ root: string; real: string }> {
  if (rel === "") throw new AppError(ErrorCode.invalidPayload, "That is the workspace root itself.");
  const { root, real: parent } = await resolveExisting(ws, path.posix.dirname(rel) === "." ? "" : path.posix.dirname(rel));
  const real = path.join(parent, path.posix.basename(rel));
  checkContained(ws, root, real);
  if (real === root) throw new AppError(ErrorCode.invalidPayload, "That is the workspace root itself.");
  try {
    await lstat(real);
  } catch {
    throw new AppError(ErrorCode.notFound, `No such file or folder: ${rel}`);
  }
  return { root, real };
}

/**
 * A path that must not exist yet: its nearest existing ancestor is followed to its real path,
 * which must be contained (the missing rest cannot be a symlink). An existing path is `conflict`.
 */
export async function resolveNew(ws: WorkspaceRoot, rel: string): Promise<{ root: string; real: string }> {
  if (rel === "") throw new AppError(ErrorCode.invalidPayload, "That is the workspace root itself.");
  const root = await realRoot(ws);
  const parts = rel.split("/");
  let probe = parts.length;
  for (;;) {
    const candidate = path.join(/*turbopackIgnore: true*/ root, ...parts.slice(0, probe));
    try {
      const real = await realpath(candidate);
      if (probe === parts.length) throw new AppError(ErrorCode.conflict, `${rel} already exists.`);
      const target = path.join(real, ...parts.slice(probe));
      checkContained(ws, root, real);
      checkContained(ws, root, target);
      return { root, real: target };
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (await leadsOutside(ws, root, rel)) throw outside();
      // A dangling symlink has no real path but is an entry: creating through it could write outside.
      if (await lstat(candidate).catch(() => undefined)) {
        throw new AppError(ErrorCode.conflict, `${relativeTo(root, candidate)} is a link to a missing target.`);
      }
      if (probe === 0) throw outside();
      probe -= 1;
    }
  }
}
