/**
 * Workspaces and their members. Every function takes the acting user and checks membership
 * itself: a non-member learns nothing (not_found), a member without the right gets forbidden.
 */
import { mkdir, realpath } from "node:fs/promises";
import path from "node:path";
import { getDb } from "@/server/db/client";
import { canPerform, parseRole, refuseMemberChange, Role, type WorkspaceAction } from "@/server/domain/workspace/roles";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { getEnv } from "@/server/env/env";

export interface WorkspaceSummary {
  id: string;
  name: string;
  slug: string;
  role: Role;
  rootPath: string;
}

export interface MemberView {
  userId: string;
  email: string;
  name: string;
  role: Role;
}

/** The directory under which every workspace lives (created if missing). */
export async function workspacesRoot(): Promise<string> {
  const env = getEnv();
  const root = path.resolve(/*turbopackIgnore: true*/ env.CONDUIT_WORKSPACES_ROOT ?? path.join(env.CONDUIT_DATA_DIR, "workspaces"));
  await mkdir(root, { recursive: true });
  return realpath(/*turbopackIgnore: true*/ root);
}

/** Lowercase, dash-separated, ASCII; never empty. */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48);
  return slug || "workspace";
}

/**
 * Resolves a requested directory name inside the root and creates it. Refuses anything that
 * would land outside the root, also through a symlink that already exists.
 */
export async function resolveWorkspaceDir(root: string, directory: string): Promise<string> {
  if (path.isAbsolute(directory) || directory.split(/[\\/]/).some((part) => part === "..")) {
    throw new AppError(ErrorCode.invalidPayload, "The directory must be a relative path inside the workspaces root.");
  }
  const target = path.resolve(root, directory);
  if (!isInside(root, target)) throw new AppError(ErrorCode.invalidPayload, "The directory must stay inside the workspaces root.");
  await mkdir(target, { recursive: true });
  const real = await realpath(target);
  if (!isInside(root, real) || real === root) {
    throw new AppError(ErrorCode.invalidPayload, "The directory must stay inside the workspaces root.");
  }
  return real;
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

/** The caller's workspaces, newest first. */
export async function listWorkspaces(userId: string): Promise<WorkspaceSummary[]> {
  const rows = await getDb().membership.findMany({
    where: { userId },
    include: { workspace: true },
    orderBy: { workspace: { createdAt: "desc" } },
  });
  return rows.map((m) => ({
    id: m.workspace.id,
    name: m.workspace.name,
    slug: m.workspace.slug,
    rootPath: m.workspace.rootPath,
    role: parseRole(m.role) ?? Role.viewer,
  }));
}

/** Creates a workspace owned by the caller, with its directory under the root. */
export async function createWorkspace(
  userId: string,
  input: { name: string; directory?: string },
): Promise<WorkspaceSummary> {
  const db = getDb();
  const base = slugify(input.name);
  let slug = base;
  for (let n = 2; await db.workspace.findUnique({ where: { slug } }); n++) slug = `${base}-${n}`;
  const root = await workspacesRoot();
  const rootPath = await resolveWorkspaceDir(root, input.directory?.trim() || slug);
  if (await db.workspace.findUnique({ where: { rootPath } })) {
    throw new AppError(ErrorCode.conflict, "Another workspace already uses that directory.");
  }
  const workspace = await db.workspace.create({
    data: { name: input.name.trim(), slug, rootPath, memberships: { create: { userId, role: Role.owner } } },
  });
  await db.auditLog.create({
    data: { actorId: userId, action: "workspace.create", objectType: "workspace", objectId: workspace.id, workspaceId: workspace.id, details: JSON.stringify({ name: workspace.name, rootPath }) },
  });
  return { id: workspace.id, name: workspace.name, slug, rootPath, role: Role.owner };
}

/**
 * The workspace named by `slug` as seen by `userId`, after checking that the member may
 * perform `action`. Non-members get not_found, so existence is not revealed.
 */
export async function requireWorkspaceAccess(userId: string, slug: string, action: WorkspaceAction): Promise<WorkspaceSummary> {
  const membership = await getDb().membership.findFirst({
    where: { userId, workspace: { slug } },
    include: { workspace: true },
  });
  if (!membership) throw new AppError(ErrorCode.notFound, "No such workspace.");
  const role = parseRole(membership.role) ?? Role.viewer;
  if (!canPerform(role, action)) {
    throw new AppError(ErrorCode.forbidden, `Your role in this workspace (${role}) does not allow that.`);
  }
  const w = membership.workspace;
  return { id: w.id, name: w.name, slug: w.slug, rootPath: w.rootPath, role };
}

/** Members of a workspace, owners first. */
export async function listMembers(workspaceId: string): Promise<MemberView[]> {
  const rows = await getDb().membership.findMany({ where: { workspaceId }, include: { user: true } });
  const order: Record<Role, number> = { owner: 0, editor: 1, viewer: 2 };
  return rows
    .map((m) => ({ userId: m.userId, email: m.user.email, name: m.user.name, role: parseRole(m.role) ?? Role.viewer }))
    .sort((a, b) => order[a.role] - order[b.role] || a.email.localeCompare(b.email));
}

/** Adds an existing user (by email) with a role. Owners only. */
export async function addMember(actorId: string, slug: string, email: string, role: Role): Promise<MemberView> {
  const ws = await requireWorkspaceAccess(actorId, slug, "manageMembers");
  const db = getDb();
  const user = await db.user.findUnique({ where: { email: email.trim().toLowerCase() } });
  if (!user) throw new AppError(ErrorCode.notFound, `No Conduit account uses ${email}. Ask them to sign up first.`);
  const existing = await db.membership.findUnique({ where: { workspaceId_userId: { workspaceId: ws.id, userId: user.id } } });
  if (existing) throw new AppError(ErrorCode.conflict, `${user.email} is already a member (${existing.role}).`);
  await db.membership.create({ data: { workspaceId: ws.id, userId: user.id, role } });
  await audit(actorId, ws.id, "member.add", user.id, { email: user.email, role });
  return { userId: user.id, email: user.email, name: user.name, role };
}

/** Changes a member's role. Owners only; the last owner cannot be demoted. */
export async function changeMemberRole(actorId: string, slug: string, targetUserId: string, role: Role): Promise<void> {
  const ws = await requireWorkspaceAccess(actorId, slug, "manageMembers");
  const members = await listMembers(ws.id);
  const refusal = refuseMemberChange(members, { targetUserId, newRole: role });
  if (refusal) throw new AppError(refusal.startsWith("That person") ? ErrorCode.notFound : ErrorCode.conflict, refusal);
  await getDb().membership.update({ where: { workspaceId_userId: { workspaceId: ws.id, userId: targetUserId } }, data: { role } });
  await audit(actorId, ws.id, "member.role", targetUserId, { role });
}

/** Removes a member (owners), or the caller leaves (anyone). The last owner cannot go. */
export async function removeMember(actorId: string, slug: string, targetUserId: string): Promise<void> {
  const leaving = actorId === targetUserId;
  const ws = await requireWorkspaceAccess(actorId, slug, leaving ? "read" : "manageMembers");
  const members = await listMembers(ws.id);
  const refusal = refuseMemberChange(members, { targetUserId, newRole: null });
  if (refusal) throw new AppError(refusal.startsWith("That person") ? ErrorCode.notFound : ErrorCode.conflict, refusal);
  await getDb().membership.delete({ where: { workspaceId_userId: { workspaceId: ws.id, userId: targetUserId } } });
  await audit(actorId, ws.id, leaving ? "member.leave" : "member.remove", targetUserId, {});
}

async function audit(actorId: string, workspaceId: string, action: string, objectId: string, details: object): Promise<void> {
  await getDb().auditLog.create({
    data: { actorId, action, objectType: "membership", objectId, workspaceId, details: JSON.stringify(details) },
  });
}
