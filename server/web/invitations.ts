/**
 * Invitations: single-use links that let one person (by email) create an account, or join a
 * workspace with a role. The link carries 32 random bytes; only their sha256 is stored, so a
 * database dump does not hold usable links. Using a link is one conditional UPDATE, so two tabs
 * (or two processes) cannot both use it.
 */
import { createHash, randomBytes } from "node:crypto";
import { getDb } from "@/server/db/client";
import {
  defaultInvitationDays,
  InvitationStatus,
  invitationExpiry,
  invitationStatusOf,
  unusableInvitationMessage,
} from "@/server/domain/account/invitation";
import { ownersMayInvite, type SignupPolicy } from "@/server/domain/account/signup-policy";
import { parseRole, Role } from "@/server/domain/workspace/roles";
import { getEnv, publicUrlOf } from "@/server/env/env";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { CurrentUser } from "@/server/web/auth";
import { checkPasswordStrength, hashPassword } from "@/server/web/passwords";
import { requireWorkspaceAccess } from "@/server/web/workspaces";

/** An invitation as the panels list it (never its token). */
export interface InvitationView {
  id: string;
  email: string;
  workspace: { name: string; slug: string } | null;
  role: Role | null;
  status: InvitationStatus;
  createdBy: string;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
  usedBy: string | null;
  revokedAt: string | null;
}

export interface NewInvitation {
  email: string;
  /** null: an instance-only invitation (admins only) */
  workspaceSlug: string | null;
  role?: Role;
  expiresInDays?: number;
}

/** What the accept page needs to know about a link. */
export type InvitationLookup =
  | { usable: false; message: string }
  | {
      usable: true;
      email: string;
      workspace: { name: string; slug: string } | null;
      role: Role | null;
      expiresAt: string;
      accountExists: boolean;
    };

/** A fresh link token and the hash that is stored for it. */
export function newInvitationToken(): { token: string; tokenHash: string } {
  const token = randomBytes(32).toString("base64url");
  return { token, tokenHash: hashInvitationToken(token) };
}

/** sha256 of the token, hex. */
export function hashInvitationToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** The link a person opens: `PUBLIC_URL/invite/<token>`. */
export function invitationLink(token: string): string {
  return `${publicUrlOf(getEnv())}/invite/${token}`;
}

/** Tokens are 43 base64url characters; anything else is not looked up. */
function looksLikeToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(token);
}

const include = { workspace: { select: { name: true, slug: true } }, createdBy: { select: { email: true } } } as const;

/**
 * Creates an invitation and returns it with its link (shown once). Admins invite to any
 * workspace or to the instance only; workspace owners to their workspace, unless the sign-up
 * policy is `closed` (then only admins bring new people in).
 */
export async function createInvitation(
  actor: CurrentUser,
  input: NewInvitation,
  options: { policy?: SignupPolicy; now?: Date } = {},
): Promise<{ invitation: InvitationView; link: string }> {
  const policy = options.policy ?? getEnv().CONDUIT_SIGNUP;
  const now = options.now ?? new Date();
  const email = input.email.trim().toLowerCase();
  const db = getDb();
  let workspaceId: string | null = null;
  if (input.workspaceSlug) {
    if (actor.isAdmin) {
      const ws = await db.workspace.findUnique({ where: { slug: input.workspaceSlug }, select: { id: true } });
      if (!ws) throw new AppError(ErrorCode.notFound, "No such workspace.");
      workspaceId = ws.id;
    } else {
      workspaceId = (await requireWorkspaceAccess(actor.id, input.workspaceSlug, "manageMembers")).id;
    }
    if (!input.role) throw new AppError(ErrorCode.invalidPayload, "Choose the role the invited person gets.");
  } else if (!actor.isAdmin) {
    throw new AppError(ErrorCode.forbidden, "Only an admin can invite someone without a workspace.");
  }
  if (!actor.isAdmin && !ownersMayInvite(policy)) {
    throw new AppError(ErrorCode.forbidden, "On this Conduit only an admin can invite new people (sign-up is closed).");
  }
  let expiresAt: Date;
  try {
    expiresAt = invitationExpiry(now, input.expiresInDays ?? defaultInvitationDays);
  } catch (err) {
    throw new AppError(ErrorCode.invalidPayload, (err as Error).message);
  }
  const existing = await db.user.findUnique({ where: { email }, select: { id: true } });
  if (existing && !workspaceId) throw new AppError(ErrorCode.conflict, `${email} already has an account.`);
  if (existing && workspaceId) {
    const member = await db.membership.findUnique({ where: { workspaceId_userId: { workspaceId, userId: existing.id } } });
    if (member) throw new AppError(ErrorCode.conflict, `${email} is already a member (${member.role}).`);
  }
  const { token, tokenHash } = newInvitationToken();
  const row = await db.invitation.create({
    data: { tokenHash, email, workspaceId, role: workspaceId ? input.role : null, createdById: actor.id, expiresAt },
    include,
  });
  await db.auditLog.create({
    data: {
      actorId: actor.id,
      action: "invitation.create",
      objectType: "invitation",
      objectId: row.id,
      workspaceId,
      details: JSON.stringify({ email, role: row.role, expiresAt: expiresAt.toISOString() }),
    },
  });
  return { invitation: viewOf(row, now, new Map()), link: invitationLink(token) };
}

/** Invitations of one workspace (its owners, or an admin), or every invitation (an admin), newest first. */
export async function listInvitations(actor: CurrentUser, scope: { workspaceSlug?: string }, now = new Date()): Promise<InvitationView[]> {
  const db = getDb();
  let where: { workspaceId?: string } = {};
  if (scope.workspaceSlug) {
    const ws = actor.isAdmin
      ? await db.workspace.findUnique({ where: { slug: scope.workspaceSlug }, select: { id: true } })
      : await requireWorkspaceAccess(actor.id, scope.workspaceSlug, "manageMembers");
    if (!ws) throw new AppError(ErrorCode.notFound, "No such workspace.");
    where = { workspaceId: ws.id };
  } else if (!actor.isAdmin) {
    throw new AppError(ErrorCode.forbidden, "Only an admin sees every invitation.");
  }
  const rows = await db.invitation.findMany({ where, include, orderBy: { createdAt: "desc" }, take: 500 });
  const usedByIds = rows.map((r) => r.usedById).filter((id): id is string => id !== null);
  const users = usedByIds.length
    ? await db.user.findMany({ where: { id: { in: usedByIds } }, select: { id: true, email: true } })
    : [];
  const emails = new Map(users.map((u) => [u.id, u.email]));
  return rows.map((r) => viewOf(r, now, emails));
}

/** Revokes a pending invitation (its creator's workspace owners, or an admin). */
export async function revokeInvitation(actor: CurrentUser, id: string, now = new Date()): Promise<InvitationView> {
  const db = getDb();
  const row = await db.invitation.findUnique({ where: { id }, include });
  if (!row) throw new AppError(ErrorCode.notFound, "No such invitation.");
  if (!actor.isAdmin) {
    if (!row.workspace) throw new AppError(ErrorCode.notFound, "No such invitation.");
    await requireWorkspaceAccess(actor.id, row.workspace.slug, "manageMembers");
  }
  const status = invitationStatusOf(row, now);
  if (status !== InvitationStatus.pending) throw new AppError(ErrorCode.conflict, `This invitation is already ${status}.`);
  const { count } = await db.invitation.updateMany({ where: { id, usedAt: null, revokedAt: null }, data: { revokedAt: now } });
  if (count !== 1) throw new AppError(ErrorCode.conflict, "This invitation was used or revoked just now.");
  await db.auditLog.create({
    data: { actorId: actor.id, action: "invitation.revoke", objectType: "invitation", objectId: id, workspaceId: row.workspaceId, details: JSON.stringify({ email: row.email }) },
  });
  return viewOf({ ...row, revokedAt: now }, now, new Map());
}

/** What the link `token` leads to; an unusable link gets the message to show, never an error. */
export async function lookUpInvitation(token: string, now = new Date()): Promise<InvitationLookup> {
  if (!looksLikeToken(token)) return { usable: false, message: unusableInvitationMessage("unknown") };
  const db = getDb();
  const row = await db.invitation.findUnique({ where: { tokenHash: hashInvitationToken(token) }, include });
  if (!row) return { usable: false, message: unusableInvitationMessage("unknown") };
  const status = invitationStatusOf(row, now);
  if (status !== InvitationStatus.pending) return { usable: false, message: unusableInvitationMessage(status) };
  const account = await db.user.findUnique({ where: { email: row.email }, select: { id: true } });
  return {
    usable: true,
    email: row.email,
    workspace: row.workspace,
    role: row.role ? (parseRole(row.role) ?? Role.viewer) : null,
    expiresAt: row.expiresAt.toISOString(),
    accountExists: account !== null,
  };
}

/** Where a person lands after accepting: the workspace, or the workspace list. */
export interface AcceptedInvitation {
  userId: string;
  email: string;
  landing: string;
}

/**
 * Creates the invited person's account (password rules as at sign-up), adds the membership and
 * uses the link, all in one transaction that starts with the conditional UPDATE: of two
 * simultaneous accepts exactly one wins, the other changes nothing.
 */
export async function acceptInvitationWithPassword(
  input: { token: string; name?: string; password: string },
  now = new Date(),
): Promise<AcceptedInvitation> {
  const row = await requireUsable(input.token, now);
  const weak = checkPasswordStrength(input.password, row.email);
  if (weak) throw new AppError(ErrorCode.invalidPayload, `Password too weak: ${weak}`);
  const db = getDb();
  if (await db.user.findUnique({ where: { email: row.email }, select: { id: true } })) {
    throw new AppError(ErrorCode.conflict, "An account with this email already exists. Sign in to accept the invitation.");
  }
  const passwordHash = await hashPassword(input.password);
  const name = input.name?.trim() || row.email.split("@")[0] || row.email;
  try {
    const userId = await db.$transaction(async (tx) => {
      await useInvitation(tx, row.id, now);
      const user = await tx.user.create({ data: { email: row.email, name, passwordHash, isAdmin: false, lastSignInAt: null } });
      await finishUse(tx, row, user.id, now, true);
      return user.id;
    });
    return { userId, email: row.email, landing: landingOf(row.workspace) };
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new AppError(ErrorCode.conflict, "An account with this email already exists. Sign in to accept the invitation.");
    }
    throw err;
  }
}

/** The signed-in person accepts an invitation for their own email: joins its workspace. */
export async function acceptInvitationAsUser(user: CurrentUser, token: string, now = new Date()): Promise<AcceptedInvitation> {
  const row = await requireUsable(token, now);
  if (row.email !== user.email.toLowerCase()) {
    throw new AppError(ErrorCode.forbidden, `This invitation is for ${row.email}; you are signed in as ${user.email}. Sign out and open the link again.`);
  }
  await getDb().$transaction(async (tx) => {
    await useInvitation(tx, row.id, now);
    await finishUse(tx, row, user.id, now, false);
  });
  return { userId: user.id, email: user.email, landing: landingOf(row.workspace) };
}

/**
 * For a GitHub sign-in that carries an invitation: whether it is usable and for which email,
 * without using it yet (see {@link consumeInvitationFor}).
 */
export async function pendingInvitationEmail(token: string, now = new Date()): Promise<string | undefined> {
  const found = await lookUpInvitation(token, now);
  return found.usable ? found.email : undefined;
}

/** Uses the invitation for an account that exists now (GitHub sign-in); false when it is no longer usable. */
export async function consumeInvitationFor(userId: string, token: string, now = new Date()): Promise<boolean> {
  try {
    const row = await requireUsable(token, now);
    await getDb().$transaction(async (tx) => {
      await useInvitation(tx, row.id, now);
      await finishUse(tx, row, userId, now, false);
    });
    return true;
  } catch (err) {
    if (err instanceof AppError) return false;
    throw err;
  }
}

type Tx = Parameters<Parameters<ReturnType<typeof getDb>["$transaction"]>[0]>[0];
type InvitationRow = NonNullable<Awaited<ReturnType<typeof findByToken>>>;

function findByToken(token: string) {
  return getDb().invitation.findUnique({ where: { tokenHash: hashInvitationToken(token) }, include });
}

async function requireUsable(token: string, now: Date): Promise<InvitationRow> {
  const row = looksLikeToken(token) ? await findByToken(token) : null;
  if (!row) throw new AppError(ErrorCode.notFound, unusableInvitationMessage("unknown"));
  const status = invitationStatusOf(row, now);
  if (status !== InvitationStatus.pending) throw new AppError(ErrorCode.expired, unusableInvitationMessage(status));
  return row;
}

/** The conditional UPDATE: first, so the transaction holds the write lock from its start. */
async function useInvitation(tx: Tx, id: string, now: Date): Promise<void> {
  const { count } = await tx.invitation.updateMany({
    where: { id, usedAt: null, revokedAt: null, expiresAt: { gt: now } },
    data: { usedAt: now },
  });
  if (count !== 1) throw new AppError(ErrorCode.expired, unusableInvitationMessage("used"));
}

async function finishUse(tx: Tx, row: InvitationRow, userId: string, now: Date, newAccount: boolean): Promise<void> {
  await tx.invitation.update({ where: { id: row.id }, data: { usedById: userId } });
  if (row.workspaceId && row.role) {
    const member = await tx.membership.findUnique({ where: { workspaceId_userId: { workspaceId: row.workspaceId, userId } } });
    if (!member) await tx.membership.create({ data: { workspaceId: row.workspaceId, userId, role: row.role } });
  }
  await tx.auditLog.create({
    data: {
      actorId: userId,
      action: "invitation.accept",
      objectType: "invitation",
      objectId: row.id,
      workspaceId: row.workspaceId,
      details: JSON.stringify({ email: row.email, role: row.role, newAccount, at: now.toISOString() }),
    },
  });
}

function landingOf(workspace: { slug: string } | null): string {
  return workspace ? `/w/${encodeURIComponent(workspace.slug)}` : "/workspaces";
}

function viewOf(
  row: {
    id: string;
    email: string;
    role: string | null;
    createdAt: Date;
    expiresAt: Date;
    usedAt: Date | null;
    usedById: string | null;
    revokedAt: Date | null;
    workspace: { name: string; slug: string } | null;
    createdBy: { email: string };
  },
  now: Date,
  usedByEmails: Map<string, string>,
): InvitationView {
  return {
    id: row.id,
    email: row.email,
    workspace: row.workspace,
    role: row.role ? (parseRole(row.role) ?? Role.viewer) : null,
    status: invitationStatusOf(row, now),
    createdBy: row.createdBy.email,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    usedAt: row.usedAt?.toISOString() ?? null,
    usedBy: row.usedById ? (usedByEmails.get(row.usedById) ?? null) : null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: string }).code === "P2002";
}
