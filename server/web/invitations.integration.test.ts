// Invitations and sign-up policy against a real, migrated database (SQLite and PostgreSQL): the
// web services read the process-wide client, so each test points DATABASE_URL at its database.
import { afterEach, describe, expect } from "vitest";
import { closeDb, getDb } from "@/server/db/client";
import { deployMigrations } from "@/server/db/migrations";
import { itOnBothDatabases } from "@/server/db/test-support";
import { AppError } from "@/server/shared/errors/app-error";
import { createAccount } from "./accounts";
import type { CurrentUser } from "./auth";
import { acceptInvitationAsUser, acceptInvitationWithPassword, createInvitation, listInvitations, lookUpInvitation, revokeInvitation } from "./invitations";

const strong = "Tr0ub4dor&3-horse";
const savedUrl = process.env.DATABASE_URL;

afterEach(async () => {
  await closeDb();
  if (savedUrl === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = savedUrl;
});

async function onDatabase(url: string, exercise: () => Promise<void>): Promise<void> {
  await deployMigrations({ url });
  process.env.DATABASE_URL = url;
  try {
    await exercise();
  } finally {
    await closeDb();
  }
}

/** One test on a fresh SQLite file and on a scratch PostgreSQL database (the process-wide client). */
function onBoth(name: string, exercise: () => Promise<void>): void {
  itOnBothDatabases("invitations", name, (url) => onDatabase(url, exercise));
}

/** An admin, a workspace owned by a second user, and the CurrentUser views of both. */
async function seed(): Promise<{ admin: CurrentUser; owner: CurrentUser; editor: CurrentUser; workspace: { id: string; slug: string } }> {
  const db = getDb();
  const make = async (email: string, isAdmin: boolean): Promise<CurrentUser> => {
    const u = await db.user.create({ data: { email, name: email.split("@")[0]!, isAdmin } });
    return { id: u.id, email: u.email, name: u.name, isAdmin };
  };
  const admin = await make("admin@example.test", true);
  const owner = await make("owner@example.test", false);
  const editor = await make("editor@example.test", false);
  const workspace = await db.workspace.create({ data: { name: "Demo", slug: "demo", rootPath: `/tmp/conduit-demo-${Date.now()}-${Math.random()}` } });
  await db.membership.createMany({
    data: [
      { workspaceId: workspace.id, userId: owner.id, role: "owner" },
      { workspaceId: workspace.id, userId: editor.id, role: "editor" },
    ],
  });
  return { admin, owner, editor, workspace: { id: workspace.id, slug: workspace.slug } };
}

const tokenOf = (link: string) => link.split("/invite/")[1]!;

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const outcome = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(AppError);
  return outcome as AppError;
}

describe("invitations", () => {
  onBoth("a link is used once, also by two simultaneous accepts", async () => {
    const { owner, workspace } = await seed();
    const { link, invitation } = await createInvitation(owner, { email: "New@Example.test", workspaceSlug: "demo", role: "viewer" }, { policy: "invite" });
    expect(link).toMatch(/\/invite\/[A-Za-z0-9_-]{43}$/);
    expect(invitation).toMatchObject({ email: "new@example.test", role: "viewer", status: "pending" });
    const db = getDb();
    // only the hash is stored
    const stored = await db.invitation.findUniqueOrThrow({ where: { id: invitation.id } });
    expect(stored.tokenHash).not.toContain(tokenOf(link));
    expect(stored.tokenHash).toMatch(/^[0-9a-f]{64}$/);

    const results = await Promise.allSettled([
      acceptInvitationWithPassword({ token: tokenOf(link), name: "Nina", password: strong }),
      acceptInvitationWithPassword({ token: tokenOf(link), name: "Nina 2", password: strong }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const failed = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(failed.reason).toBeInstanceOf(AppError);
    const won = (results.find((r) => r.status === "fulfilled") as PromiseFulfilledResult<{ userId: string; landing: string }>).value;
    expect(won.landing).toBe("/w/demo");

    const users = await db.user.findMany({ where: { email: "new@example.test" } });
    expect(users).toHaveLength(1);
    expect(users[0]!.isAdmin).toBe(false);
    const memberships = await db.membership.findMany({ where: { workspaceId: workspace.id, userId: won.userId } });
    expect(memberships.map((m) => m.role)).toEqual(["viewer"]);
    const used = await db.invitation.findUniqueOrThrow({ where: { id: invitation.id } });
    expect(used.usedAt).not.toBeNull();
    expect(used.usedById).toBe(won.userId);
    expect(await db.auditLog.count({ where: { action: "invitation.accept", objectId: invitation.id } })).toBe(1);
    expect(await db.auditLog.count({ where: { action: "invitation.create", objectId: invitation.id, actorId: owner.id } })).toBe(1);

    // a third try, later, is told the link was used
    expect((await rejection(acceptInvitationWithPassword({ token: tokenOf(link), password: strong }))).message).toMatch(/already been used/);
    expect(await lookUpInvitation(tokenOf(link))).toMatchObject({ usable: false, message: expect.stringMatching(/already been used/) });
    const [listed] = await listInvitations(owner, { workspaceSlug: "demo" });
    expect(listed).toMatchObject({ status: "used", usedBy: "new@example.test" });
  });

  onBoth("an existing account joins once through its own signed-in accept", async () => {
    const { admin, editor } = await seed();
    const db = getDb();
    const other = await db.workspace.create({ data: { name: "Other", slug: "other", rootPath: `/tmp/conduit-other-${Date.now()}-${Math.random()}` } });
    const { link } = await createInvitation(admin, { email: editor.email, workspaceSlug: "other", role: "editor" }, { policy: "closed" });
    expect(await lookUpInvitation(tokenOf(link))).toMatchObject({ usable: true, accountExists: true, workspace: { slug: "other" } });
    // a password accept for an existing account does not make a second account
    expect((await rejection(acceptInvitationWithPassword({ token: tokenOf(link), password: strong }))).code).toBe("conflict");
    const results = await Promise.allSettled([acceptInvitationAsUser(editor, tokenOf(link)), acceptInvitationAsUser(editor, tokenOf(link))]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await db.membership.count({ where: { workspaceId: other.id, userId: editor.id } })).toBe(1);
    expect(await db.user.count({ where: { email: editor.email } })).toBe(1);
  });

  onBoth("expired and revoked links are refused with a clear message", async () => {
    const { owner, editor, admin } = await seed();
    const db = getDb();
    const expiring = await createInvitation(owner, { email: "late@example.test", workspaceSlug: "demo", role: "editor", expiresInDays: 1 }, { policy: "invite" });
    await db.invitation.update({ where: { id: expiring.invitation.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await lookUpInvitation(tokenOf(expiring.link))).toEqual({ usable: false, message: expect.stringMatching(/expired/) });
    const late = await rejection(acceptInvitationWithPassword({ token: tokenOf(expiring.link), password: strong }));
    expect(late.code).toBe("expired");
    expect(late.message).toMatch(/expired/);
    expect((await rejection(revokeInvitation(owner, expiring.invitation.id))).code).toBe("conflict");

    const revoked = await createInvitation(owner, { email: "gone@example.test", workspaceSlug: "demo", role: "editor" }, { policy: "invite" });
    // an editor may not revoke; a non-member's workspace stays hidden
    expect((await rejection(revokeInvitation(editor, revoked.invitation.id))).code).toBe("forbidden");
    expect((await revokeInvitation(owner, revoked.invitation.id)).status).toBe("revoked");
    expect((await rejection(acceptInvitationWithPassword({ token: tokenOf(revoked.link), password: strong }))).message).toMatch(/revoked/);
    expect((await rejection(revokeInvitation(admin, revoked.invitation.id))).code).toBe("conflict");
    expect(await db.auditLog.count({ where: { action: "invitation.revoke" } })).toBe(1);
    expect(await db.user.count({ where: { email: { in: ["late@example.test", "gone@example.test"] } } })).toBe(0);

    expect(await lookUpInvitation("not-a-token")).toMatchObject({ usable: false, message: expect.stringMatching(/not valid/) });
    expect(await lookUpInvitation("A".repeat(43))).toMatchObject({ usable: false, message: expect.stringMatching(/not valid/) });
  });

  onBoth("who may invite: owners of the workspace (not under closed), admins anywhere or instance-only", async () => {
    const { admin, owner, editor } = await seed();
    expect((await rejection(createInvitation(editor, { email: "x@example.test", workspaceSlug: "demo", role: "viewer" }, { policy: "invite" }))).code).toBe("forbidden");
    expect((await rejection(createInvitation(owner, { email: "x@example.test", workspaceSlug: "demo", role: "viewer" }, { policy: "closed" }))).code).toBe("forbidden");
    expect((await rejection(createInvitation(owner, { email: "x@example.test", workspaceSlug: null }, { policy: "invite" }))).code).toBe("forbidden");
    expect((await rejection(createInvitation(owner, { email: editor.email, workspaceSlug: "demo", role: "viewer" }, { policy: "invite" }))).code).toBe("conflict");
    expect((await rejection(createInvitation(admin, { email: "x@example.test", workspaceSlug: "demo", role: "viewer", expiresInDays: 31 }, { policy: "invite" }))).code).toBe("invalid_payload");
    const solo = await createInvitation(admin, { email: "solo@example.test", workspaceSlug: null }, { policy: "closed" });
    expect(solo.invitation).toMatchObject({ workspace: null, role: null });
    expect((await rejection(createInvitation(admin, { email: owner.email, workspaceSlug: null }, { policy: "invite" }))).code).toBe("conflict");
    const accepted = await acceptInvitationWithPassword({ token: tokenOf(solo.link), password: strong });
    expect(accepted.landing).toBe("/workspaces");
    expect(await getDb().membership.count({ where: { userId: accepted.userId } })).toBe(0);
    expect((await listInvitations(admin, {})).map((i) => i.status)).toEqual(["used"]);
    expect((await rejection(listInvitations(owner, {}))).code).toBe("forbidden");
  });
});

describe("createAccount and the sign-up policy", () => {
  onBoth("the first account is admin; later self sign-ups follow the policy", async () => {
    const first = await createAccount({ email: "first@example.test", password: strong }, "invite");
    expect(first.isAdmin).toBe(true);
    const refused = await rejection(createAccount({ email: "second@example.test", password: strong }, "invite"));
    expect(refused.code).toBe("forbidden");
    expect(refused.message).toMatch(/invite-only/);
    expect((await rejection(createAccount({ email: "second@example.test", password: strong }, "closed"))).message).toMatch(/closed/);
    const open = await createAccount({ email: "second@example.test", password: strong }, "open");
    expect(open.isAdmin).toBe(false);
    expect(await getDb().user.count()).toBe(2);
  });

  onBoth("of two simultaneous first sign-ups under invite, one becomes admin and the other is refused", async () => {
    const results = await Promise.allSettled([
      createAccount({ email: "a@example.test", password: strong }, "invite"),
      createAccount({ email: "b@example.test", password: strong }, "invite"),
    ]);
    const ok = results.filter((r) => r.status === "fulfilled") as PromiseFulfilledResult<{ isAdmin: boolean }>[];
    expect(ok).toHaveLength(1);
    expect(ok[0]!.value.isAdmin).toBe(true);
    expect(await getDb().user.count()).toBe(1);
  });
});
