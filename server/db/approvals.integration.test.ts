import { expect } from "vitest";
import {
  findApproval,
  findApprovalContext,
  findRoleForSession,
  insertApproval,
  insertAuditLog,
  settleApproval,
} from "./approvals";
import type { Db } from "./client";
import { updateSessionLive } from "./sessions";
import { itOnBothProviders } from "./test-support";

/** The approval path's flat SQL (context, insert, role, settle, audit, live row), the same on both providers. */
async function exerciseApprovalStore(db: Db): Promise<void> {
  const [owner, viewer, outsider] = await Promise.all(
    ["owner", "viewer", "outsider"].map((name) => db.user.create({ data: { email: `${name}@example.test`, name } })),
  );
  const workspace = await db.workspace.create({
    data: { name: "W", slug: "w", rootPath: "/w", approvalDeadlineSec: 90 },
  });
  await db.membership.createMany({
    data: [
      { workspaceId: workspace.id, userId: owner!.id, role: "owner" },
      { workspaceId: workspace.id, userId: viewer!.id, role: "viewer" },
    ],
  });
  await db.permissionRule.createMany({
    data: [
      { workspaceId: workspace.id, toolName: "Bash", ruleContent: "npm test", createdById: owner!.id },
      { workspaceId: workspace.id, toolName: "Read", ruleContent: null, createdById: owner!.id },
      {
        workspaceId: workspace.id,
        toolName: "Bash",
        ruleContent: "rm -rf x",
        behavior: "deny",
        createdById: owner!.id,
      },
    ],
  });
  const session = await db.session.create({
    data: { workspaceId: workspace.id, createdById: owner!.id, title: "Fix the 'quotes'" },
  });

  const context = await findApprovalContext(db, session.id);
  expect(context).toEqual({
    sessionId: session.id,
    title: "Fix the 'quotes'",
    createdById: owner!.id,
    workspace: { id: workspace.id, slug: "w", name: "W", rootPath: "/w", approvalDeadlineSec: 90 },
    members: expect.arrayContaining([
      { userId: owner!.id, role: "owner" },
      { userId: viewer!.id, role: "viewer" },
    ]),
    // Allow rules only: a deny rule never lets anything through.
    rules: expect.arrayContaining([
      { toolName: "Bash", ruleContent: "npm test" },
      { toolName: "Read", ruleContent: null },
    ]),
  });
  expect(context!.members).toHaveLength(2);
  expect(context!.rules).toHaveLength(2);
  expect(await findApprovalContext(db, "no-such-session")).toBeUndefined();
  await db.workspace.update({ where: { id: workspace.id }, data: { approvalDeadlineSec: null } });
  expect((await findApprovalContext(db, session.id))!.workspace.approvalDeadlineSec).toBeNull();

  expect(await findRoleForSession(db, owner!.id, session.id)).toBe("owner");
  expect(await findRoleForSession(db, viewer!.id, session.id)).toBe("viewer");
  expect(await findRoleForSession(db, outsider!.id, session.id)).toBeUndefined();
  expect(await findRoleForSession(db, owner!.id, "no-such-session")).toBeUndefined();

  const createdAt = new Date("2026-05-06T07:08:09.123Z");
  const expiresAt = new Date("2026-05-06T07:18:09.123Z");
  const input = JSON.stringify({ command: `echo "é'; DROP TABLE x; --"` });
  await insertApproval(db, {
    id: "appr-1",
    sessionId: session.id,
    requestId: "req-1",
    toolName: "Bash",
    toolUseId: "toolu_1",
    input,
    suggestions: null,
    decisionReason: "Bash wants to run a command",
    blockedPath: null,
    status: "pending",
    expiresAt,
    createdAt,
  });
  const pending = await findApproval(db, "appr-1");
  expect(pending).toMatchObject({
    id: "appr-1",
    sessionId: session.id,
    requestId: "req-1",
    toolName: "Bash",
    toolUseId: "toolu_1",
    input,
    status: "pending",
    decidedById: null,
    decidedAt: null,
    expiresAt,
    createdAt,
    session: {
      title: "Fix the 'quotes'",
      createdById: owner!.id,
      workspace: { id: workspace.id, slug: "w", name: "W" },
    },
  });
  // The same CLI request twice is refused by the (session, request id) key.
  await expect(
    insertApproval(db, { ...pending!, id: "appr-2", status: "pending", expiresAt: null, createdAt }),
  ).rejects.toThrow();

  const decidedAt = new Date("2026-05-06T07:09:00.000Z");
  const fields = { status: "allowed", decidedById: owner!.id, decidedAt, finalInput: null, message: null };
  expect(await settleApproval(db, "appr-1", fields)).toBe(true);
  expect(await settleApproval(db, "appr-1", { ...fields, status: "denied" })).toBe(false);
  expect(await findApproval(db, "appr-1")).toMatchObject({
    status: "allowed",
    decidedAt,
    decidedBy: { id: owner!.id },
  });

  await insertAuditLog(db, {
    actorId: owner!.id,
    action: "approval.allow",
    objectType: "approval",
    objectId: "appr-1",
    workspaceId: workspace.id,
    details: { proposed: { command: "ls" } },
  });
  const audit = await db.auditLog.findFirstOrThrow({ where: { objectId: "appr-1" } });
  expect(audit).toMatchObject({ actorId: owner!.id, action: "approval.allow", workspaceId: workspace.id });
  expect(JSON.parse(audit.details!)).toEqual({ proposed: { command: "ls" } });
  expect(Math.abs(audit.at.getTime() - Date.now())).toBeLessThan(60_000);

  const before = await db.session.findUniqueOrThrow({ where: { id: session.id } });
  const lastActivityAt = new Date("2026-05-06T08:00:00.000Z");
  await updateSessionLive(db, session.id, {
    status: "awaiting-approval",
    pid: 4242,
    sidecarId: "host-a",
    lastActivityAt,
  });
  const after = await db.session.findUniqueOrThrow({ where: { id: session.id } });
  expect(after).toMatchObject({
    status: "awaiting-approval",
    pid: 4242,
    sidecarId: "host-a",
    lastActivityAt,
    mode: before.mode,
  });
  expect(after.updatedAt.getTime()).toBeGreaterThanOrEqual(before.updatedAt.getTime());
  await updateSessionLive(db, session.id, { pid: null, model: null, title: null });
  expect(await db.session.findUniqueOrThrow({ where: { id: session.id } })).toMatchObject({
    status: "awaiting-approval",
    pid: null,
    model: null,
    title: null,
  });
}

itOnBothProviders(
  "approval store",
  "reads the context, stores, settles once, audits and keeps the live row",
  exerciseApprovalStore,
);
