/**
 * Workspaces and their members. Every function takes the acting user and checks membership
 * itself: a non-member learns nothing (not_found), a member without the right gets forbidden.
 */
import { chmod, lstat, mkdir, realpath, rmdir } from "node:fs/promises";
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

/** The directory under which every workspace lives (created 0700 if missing), as a real path. */
export async function workspacesRoot(): Promise<string> {
  const env = getEnv();
  const root = path.resolve(/*turbopackIgnore: true*/ env.CONDUIT_WORKSPACES_ROOT ?? path.join(env.CONDUIT_DATA_DIR, "workspaces"));
  await mkdir(root, { recursive: true, mode: 0o700 });
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

/** A workspace directory name: one path segment of letters, digits, `-`, `_` and `.`, not starting with a dot. */
export const WORKSPACE_DIR_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

/** The one answer for a directory name that is taken, whoever took it: it must not tell who, or whether it is a workspace. */
export const DIRECTORY_NOT_AVAILABLE = "That directory name is not available. Choose another one.";

/** Refuses a name that is not exactly one allowed path segment. */
export function checkWorkspaceDirName(directory: string): string {
  if (!WORKSPACE_DIR_NAME.test(directory)) {
    throw new AppError(
      ErrorCode.invalidPayload,
      "The directory must be one name (up to 64 letters, digits, dashes, underscores or dots, not starting with a dot), not a path.",
    );
  }
  return directory;
}

/** True when `a` is `b`, or one lies inside the other. */
export function pathsOverlap(a: string, b: string): boolean {
  const inside = (parent: string, child: string) => {
    const rel = path.relative(parent, child);
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
  };
  return inside(a, b) || inside(b, a);
}

/**
 * Creates the directory of a new workspace: `<root>/<directory>`, one segment, 0700. Refused
 * (with {@link DIRECTORY_NOT_AVAILABLE}) when anything already exists there — a directory, a file,
 * a symlink — or when it would lie inside or above a workspace in `takenPaths` (real paths of
 * every workspace). Checked before anything is created; the exclusive mkdir closes the race.
 */
export async function resolveWorkspaceDir(root: string, directory: string, takenPaths: readonly string[] = []): Promise<string> {
  const realRoot = await realpath(/*turbopackIgnore: true*/ root);
  const target = path.join(realRoot, checkWorkspaceDirName(directory));
  if (takenPaths.some((taken) => pathsOverlap(taken, target))) throw new AppError(ErrorCode.conflict, DIRECTORY_NOT_AVAILABLE);
  try {
    await mkdir(/*turbopackIgnore: true*/ target, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") throw new AppError(ErrorCode.conflict, DIRECTORY_NOT_AVAILABLE);
    throw error;
  }
  // mkdir's mode is filtered by the umask.
  await chmod(/*turbopackIgnore: true*/ target, 0o700);
  return target;
}

async function existsOnDisk(file: string): Promise<boolean> {
  try {
    await lstat(/*turbopackIgnore: true*/ file);
    return true;
  } catch {
    return false;
  }
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

/** What the workspace list says of each workspace's sessions. */
export interface WorkspaceActivity {
  /** Sessions not deleted (archived ones included). */
  sessions: number;
  /** Sessions starting, running or waiting for an approval now. */
  working: number;
  /** The latest activity of any session (ISO), or null without sessions. */
  lastActivityAt: string | null;
}

/** The sessions' counts and latest activity of each workspace, in two grouped statements. */
export async function listWorkspaceActivity(workspaceIds: readonly string[]): Promise<Record<string, WorkspaceActivity>> {
  const activity: Record<string, WorkspaceActivity> = {};
  if (workspaceIds.length === 0) return activity;
  const db = getDb();
  const where = { workspaceId: { in: [...workspaceIds] }, deletedAt: null };
  const [all, working] = await Promise.all([
    db.session.groupBy({ by: ["workspaceId"], where, _count: { _all: true }, _max: { lastActivityAt: true } }),
    db.session.groupBy({
      by: ["workspaceId"],
      where: { ...where, status: { in: ["starting", "running", "awaiting-approval"] } },
      _count: { _all: true },
    }),
  ]);
  for (const row of all) {
    activity[row.workspaceId] = {
      sessions: row._count._all,
      working: 0,
      lastActivityAt: row._max.lastActivityAt?.toISOString() ?? null,
    };
  }
  for (const row of working) {
    const a = activity[row.workspaceId];
    if (a) a.working = row._count._all;
  }
  return activity;
}

/**
 * Creates a workspace owned by the caller, with a new directory under the root. A directory name
 * the caller asked for that is taken gets the same answer whoever took it (see
 * {@link resolveWorkspaceDir}), unless it is one of the caller's own workspaces.
 */
export async function createWorkspace(
  userId: string,
  input: { name: string; directory?: string },
): Promise<WorkspaceSummary> {
  const db = getDb();
  const root = await workspacesRoot();
  // No directory: the slug names it. A directory given, even an empty one, must be a valid name.
  const requested = input.directory === undefined ? undefined : checkWorkspaceDirName(input.directory.trim());
  const base = slugify(input.name);
  let slug = base;
  // Without a requested directory the slug names it: skip slugs taken in the database or on disk.
  for (let n = 2; (await db.workspace.findUnique({ where: { slug } })) || (requested === undefined && (await existsOnDisk(path.join(root, slug)))); n++) {
    slug = `${base}-${n}`;
  }
  const directory = requested ?? slug;
  const taken = await db.workspace.findMany({ select: { rootPath: true, name: true, memberships: { where: { userId }, select: { role: true } } } });
  // one owner, one name: two workspaces called the same would be told apart by their slug only
  const sameName = taken.find((w) => w.memberships.some((m) => m.role === Role.owner) && w.name.trim().toLowerCase() === input.name.trim().toLowerCase());
  if (sameName) throw new AppError(ErrorCode.conflict, `You already own a workspace named “${sameName.name}”. Choose another name.`);
  const own = taken.find((w) => w.memberships.length > 0 && w.rootPath === path.join(root, directory));
  if (own) throw new AppError(ErrorCode.conflict, `Your workspace “${own.name}” already uses that directory.`);
  const rootPath = await resolveWorkspaceDir(root, directory, taken.map((w) => w.rootPath));
  let workspace;
  try {
    workspace = await db.workspace.create({
      data: { name: input.name.trim(), slug, rootPath, memberships: { create: { userId, role: Role.owner } } },
    });
  } catch (error) {
    // The directory was made for this row only: leave no stray directory that blocks the name.
    await rmdir(/*turbopackIgnore: true*/ rootPath).catch(() => undefined);
    throw error;
  }
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
