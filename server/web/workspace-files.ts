/**
 * Workspace files for people: membership and role checks, then the workspace's files door
 * (`server/workspace-agent`, the file layer run in a process sandboxed to the workspace).
 * Members read; owners and editors write, and every write is audited
 * (`file.create|save|rename|delete`, objectType `file`, objectId the relative path).
 */
import { workspaceDoorScope } from "@/server/db/door-scopes";
import { z } from "zod";
import { getDb } from "@/server/db/client";
import type { DirListing, FileRead, NameSearchResult } from "@/server/shared/wire/files";
import { FileConflictError, maxRelativePathLength, parseRelativePath, workspaceDoor, type DoorScope } from "@/server/workspace-agent";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { errorResponse } from "@/server/web/http";
import { requireWorkspaceAccess, type WorkspaceSummary } from "@/server/web/workspaces";

const ZRelPath = z.string().max(maxRelativePathLength).transform((p, ctx) => {
  try {
    return parseRelativePath(p);
  } catch (err) {
    ctx.addIssue({ code: "custom", message: (err as Error).message });
    return z.NEVER;
  }
});
const ZFilePath = ZRelPath.refine((p) => p !== "", "name a file or folder, not the workspace root");
const ZVersion = z.string().regex(/^[0-9a-f]{64}$/, "a version is a sha256 in hex");
/** Text a browser may save; the byte cap is checked again by the file layer. */
const ZContent = z.string().max(5 * 1024 * 1024);

export const ZListQuery = z.object({ path: ZRelPath.default("") });
export const ZSearchQuery = z.object({ q: z.string().trim().min(1, "type part of a name").max(200) });
export const ZReadQuery = z.object({ path: ZFilePath, versionOnly: z.enum(["1", "true"]).optional() });
export const ZSaveInput = z.object({ path: ZFilePath, content: ZContent, baseVersion: ZVersion.nullable() });
export const ZCreateInput = z.object({ path: ZFilePath, kind: z.enum(["file", "dir"]), content: ZContent.optional() });
export const ZRenameInput = z.object({ from: ZFilePath, to: ZFilePath });
export const ZDeleteQuery = z.object({ path: ZFilePath });

/**
 * The files door of the workspace's directory, minus other workspaces that live inside it (the
 * Files pane's and the settings review's: one door per workspace).
 */
export function workspaceFilesScope(ws: Pick<WorkspaceSummary, "id" | "rootPath">): Promise<DoorScope> {
  return workspaceDoorScope(getDb(), ws, "files");
}

async function audit(actorId: string, workspaceId: string, action: string, objectId: string, details: object): Promise<void> {
  await getDb().auditLog.create({ data: { actorId, action, objectType: "file", objectId, workspaceId, details: JSON.stringify(details) } });
}

export async function listFiles(userId: string, slug: string, relDir: string): Promise<DirListing> {
  const ws = await requireWorkspaceAccess(userId, slug, "read");
  return workspaceDoor().call(await workspaceFilesScope(ws), "files.list", { path: relDir });
}

export async function searchFiles(userId: string, slug: string, query: string): Promise<NameSearchResult> {
  const ws = await requireWorkspaceAccess(userId, slug, "read");
  return workspaceDoor().call(await workspaceFilesScope(ws), "files.search", { query });
}

export async function readFile(userId: string, slug: string, rel: string, versionOnly: boolean): Promise<FileRead | { path: string; size: number; version: string }> {
  const ws = await requireWorkspaceAccess(userId, slug, "read");
  const scope = await workspaceFilesScope(ws);
  return versionOnly ? workspaceDoor().call(scope, "files.version", { path: rel }) : workspaceDoor().call(scope, "files.read", { path: rel });
}

export async function saveFile(userId: string, slug: string, input: z.infer<typeof ZSaveInput>) {
  const ws = await requireWorkspaceAccess(userId, slug, "steer");
  const saved = await workspaceDoor().call(await workspaceFilesScope(ws), "files.save", { path: input.path, content: input.content, baseVersion: input.baseVersion });
  await audit(userId, ws.id, "file.save", saved.path, { baseVersion: input.baseVersion, version: saved.version, size: saved.size });
  return saved;
}

export async function createFile(userId: string, slug: string, input: z.infer<typeof ZCreateInput>) {
  const ws = await requireWorkspaceAccess(userId, slug, "steer");
  const created = await workspaceDoor().call(await workspaceFilesScope(ws), "files.create", { path: input.path, kind: input.kind, content: input.content ?? "" });
  await audit(userId, ws.id, "file.create", created.path, { kind: created.kind, version: created.version });
  return created;
}

export async function renameFile(userId: string, slug: string, input: z.infer<typeof ZRenameInput>) {
  const ws = await requireWorkspaceAccess(userId, slug, "steer");
  const renamed = await workspaceDoor().call(await workspaceFilesScope(ws), "files.rename", { from: input.from, to: input.to });
  await audit(userId, ws.id, "file.rename", renamed.from, { to: renamed.to });
  return renamed;
}

export async function deleteFile(userId: string, slug: string, rel: string) {
  const ws = await requireWorkspaceAccess(userId, slug, "steer");
  const deleted = await workspaceDoor().call(await workspaceFilesScope(ws), "files.delete", { path: rel });
  await audit(userId, ws.id, "file.delete", deleted.path, { kind: deleted.kind });
  return deleted;
}

/** Parses a request's query string against a schema; a mismatch is `invalid_payload`. */
export function readQuery<T extends z.ZodType>(req: Request, schema: T): z.infer<T> {
  const parsed = schema.safeParse(Object.fromEntries(new URL(req.url).searchParams));
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first && first.path.length > 0 ? `${first.path.join(".")}: ` : "";
    throw new AppError(ErrorCode.invalidPayload, `${where}${first?.message ?? "invalid query"}`);
  }
  return parsed.data;
}

/**
 * A save conflict answers 409 with what the file holds now, so the editor can show both
 * versions; anything else goes to the common funnel.
 */
export function fileErrorResponse(err: unknown): Response {
  if (err instanceof FileConflictError) {
    return Response.json({ error: { code: err.code, message: err.message, current: err.current } }, { status: 409 });
  }
  return errorResponse(err);
}
