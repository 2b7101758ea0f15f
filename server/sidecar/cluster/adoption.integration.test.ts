// Adoption on a real database: a dead node is adopted by exactly one live node; its running turn
// ends with a visible reason, its pending approval is cancelled and its deciders told, an
// unanswered prompt is refused visibly, its rows stop and its leases go; its children are reaped
// only on its own host; a session another node took over is left alone; an id without a node
// row (an earlier release) is adopted once.
import pino from "pino";
import { expect } from "vitest";
import type { Db } from "@/server/db/client";
import { itOnBothProviders } from "@/server/db/test-support";
import { eventLogStoreOf, SessionEventWriter } from "@/server/sidecar/session/session-event-writer";
import { ApprovalFact } from "@/server/shared/wire/approval";
import { Adoption, adoptedApprovalMessage, type AdoptionDeps } from "./adoption";
import { LeaseKeeper } from "./session-leases";

const log = pino({ level: "silent" });
const t0 = Date.parse("2026-12-01T10:00:00Z");

async function seed(db: Db) {
  const user = (name: string) => db.user.create({ data: { email: `${name}@example.test`, name } });
  const [owner, editor, viewer] = [await user("owner"), await user("editor"), await user("viewer")];
  const workspace = await db.workspace.create({ data: { name: "W", slug: "w", rootPath: "/tmp/w" } });
  await db.membership.createMany({
    data: [
      { workspaceId: workspace.id, userId: owner.id, role: "owner" },
      { workspaceId: workspace.id, userId: editor.id, role: "editor" },
      { workspaceId: workspace.id, userId: viewer.id, role: "viewer" },
    ],
  });
  const session = (sidecarId: string, status: string, pid: number | null = null) =>
    db.session.create({ data: { workspaceId: workspace.id, createdById: owner.id, sidecarId, status, pid } });
  const node = (id: string, host: string, heartbeatAt: number, stoppedAt: Date | null = null) =>
    db.sidecarNode.create({ data: { id, host, pid: 1, startedAt: new Date(t0 - 60_000), heartbeatAt: new Date(heartbeatAt), stoppedAt } });
  const events = (sessionId: string, list: { kind: string; payload: unknown }[]) =>
    db.sessionEvent.createMany({
      data: list.map((e, i) => ({ sessionId, seq: i + 1, kind: e.kind, payload: JSON.stringify(e.payload), ...(e.kind === "prompt" ? { userId: owner.id } : {}) })),
    });
  return { owner, editor, viewer, session, node, events };
}

function adopter(db: Db, selfId: string, host: string, over: Partial<AdoptionDeps> = {}) {
  const reaped: number[][] = [];
  const notified: { users: readonly string[]; event: string; payload: unknown }[] = [];
  const adoption = new Adoption({
    db,
    selfId,
    writer: new SessionEventWriter(eventLogStoreOf(db), log),
    log,
    host,
    leaseMs: 6_000,
    now: () => t0,
    reap: async (pids) => {
      reaped.push(pids);
      return { reaped: pids, survived: [] };
    },
    notify: (users, event, payload) => void notified.push({ users, event, payload }),
    ...over,
  });
  return { adoption, reaped, notified };
}

const notices = async (db: Db, sessionId: string) =>
  (await db.sessionEvent.findMany({ where: { sessionId, kind: "process" }, orderBy: { seq: "asc" } })).map(
    (e) => JSON.parse(e.payload) as { phase: string; reason: string },
  );

type Seeded = Awaited<ReturnType<typeof seed>>;

/**
 * On node "dead": a turn running (its prompt reached the CLI) with a pending approval, and a
 * prompt accepted that no CLI read.
 */
async function deadNodeSessions(db: Db, session: Seeded["session"], events: Seeded["events"]) {
  const running = await session("dead", "awaiting-approval", 4242);
  await events(running.id, [
    { kind: "prompt", payload: { text: "go", uuid: "u1" } },
    { kind: "cli", payload: { type: "user", uuid: "u1" } },
  ]);
  const approval = await db.approval.create({ data: { sessionId: running.id, requestId: "r1", toolName: "Bash", input: "{}" } });
  const unread = await session("dead", "starting");
  await events(unread.id, [{ kind: "prompt", payload: { text: "hi", uuid: "u2" } }]);
  return { running, approval, unread };
}

itOnBothProviders("adoption", "exactly one live node adopts a dead one and settles its sessions", async (db) => {
  const { owner, editor, session, node, events } = await seed(db);
  await node("dead", "host-1", t0 - 6_001);
  await node("alive", "host-2", t0 - 1_000);
  await node("stopped", "host-1", t0 - 60_000, new Date(t0 - 59_000));
  const { running, approval, unread } = await deadNodeSessions(db, session, events);
  // idle, its turn answered: just stopped
  const idle = await session("dead", "idle", 4343);
  await events(idle.id, [
    { kind: "prompt", payload: { text: "x", uuid: "u3" } },
    { kind: "cli", payload: { type: "result", subtype: "success", user_message_uuids: ["u3"] } },
  ]);
  // taken over by a live node already (its unexpired lease): left alone
  const moved = await session("dead", "running");
  await events(moved.id, [{ kind: "prompt", payload: { text: "y", uuid: "u4" } }]);
  await db.sessionLease.create({ data: { sessionId: moved.id, ownerId: "alive", expiresAt: new Date(t0 + 5_000) } });
  await db.sessionLease.create({ data: { sessionId: running.id, ownerId: "dead", expiresAt: new Date(t0 - 1) } });
  // a session of the live node: not touched
  const others = await session("alive", "running", 777);

  const b = adopter(db, "node-b", "host-1");
  const c = adopter(db, "node-c", "host-1");
  const [rb, rc] = await Promise.all([b.adoption.run(), c.adoption.run()]);
  const reports = [...rb, ...rc].filter((r) => r.nodeId === "dead");
  expect(reports).toHaveLength(1);
  const report = reports[0]!;
  const winner = rb.some((r) => r.nodeId === "dead") ? b : c;
  expect(await db.sidecarNode.findUnique({ where: { id: "dead" } })).toMatchObject({ adoptedById: winner === b ? "node-b" : "node-c" });
  expect(report.sessions.sort()).toEqual([running.id, unread.id, idle.id].sort());
  // (its expired lease was taken over by the adopter while it settled the session, then released)
  expect(report).toMatchObject({ approvalsCancelled: 1, promptsSettled: 2, stopped: 3, leasesDeleted: 0 });
  // the children of the dead node (same host) reaped, by their recorded pids only
  expect(winner.reaped).toEqual([expect.arrayContaining([4242, 4343])]);
  expect(winner.reaped[0]).toHaveLength(2);

  // the running turn ends visibly, with its reason; the unread prompt is refused visibly
  expect(await notices(db, running.id)).toEqual([expect.objectContaining({ phase: "turn-interrupted", reason: expect.stringMatching(/took the session over/) })]);
  expect(await notices(db, unread.id)).toEqual([expect.objectContaining({ phase: "prompt-refused" })]);
  expect(await notices(db, idle.id)).toEqual([]);
  expect(await notices(db, moved.id)).toEqual([]);
  // the approval is cancelled and its deciders (owner and editor, not the viewer) are told
  expect(await db.approval.findUnique({ where: { id: approval.id } })).toMatchObject({ status: "cancelled", message: adoptedApprovalMessage });
  expect(winner.notified).toEqual([
    { users: expect.arrayContaining([owner.id, editor.id]), event: ApprovalFact.resolved, payload: expect.objectContaining({ approvalId: approval.id, status: "cancelled" }) },
  ]);
  expect(winner.notified[0]!.users).toHaveLength(2);
  // rows stopped, pids cleared; the moved and the live node's sessions untouched; no lease of the dead node left
  const rows = new Map((await db.session.findMany()).map((s) => [s.id, s]));
  for (const s of [running, unread, idle]) expect(rows.get(s.id)).toMatchObject({ status: "stopped", pid: null });
  expect(rows.get(moved.id)).toMatchObject({ status: "running" });
  expect(rows.get(others.id)).toMatchObject({ status: "running", pid: 777 });
  expect(await db.sessionLease.findMany({ where: { ownerId: "dead" } })).toEqual([]);
  expect(await db.sessionLease.findUnique({ where: { sessionId: moved.id } })).toMatchObject({ ownerId: "alive" });
  // nothing held by the adopter afterwards
  expect(await db.sessionLease.count({ where: { ownerId: { in: ["node-b", "node-c"] } } })).toBe(0);

  // adopted once: a second look finds nothing
  expect([...(await b.adoption.run()), ...(await c.adoption.run())]).toEqual([]);
});

itOnBothProviders("adoption", "never reaps children of another host; adopts ids without a node row once", async (db) => {
  const { session, node, events } = await seed(db);
  await node("dead", "host-far", t0 - 10_000);
  const far = await session("dead", "running", 5151);
  await events(far.id, [{ kind: "prompt", payload: { text: "go", uuid: "u1" } }]);
  // an earlier release named its node by the host name
  const legacy = await session("old-host", "idle", 6161);
  const b = adopter(db, "node-b", "host-1");
  const reports = await b.adoption.run();
  expect(reports.map((r) => r.nodeId).sort()).toEqual(["dead", "old-host"]);
  expect(b.reaped).toEqual([]); // neither child ran on this host
  expect(await db.sidecarNode.findUnique({ where: { id: "old-host" } })).toMatchObject({ adoptedById: "node-b" });
  expect(await db.session.findUnique({ where: { id: legacy.id } })).toMatchObject({ status: "stopped", pid: null });
  // another node starting later does not adopt it again
  const c = adopter(db, "node-c", "old-host");
  expect(await c.adoption.run()).toEqual([]);
  // on the host the legacy node ran on, its children are reaped
  await db.sidecarNode.deleteMany({ where: { id: "old-host" } });
  await db.session.update({ where: { id: legacy.id }, data: { pid: 6161 } });
  const d = adopter(db, "node-d", "old-host");
  expect((await d.adoption.run()).map((r) => r.nodeId)).toEqual(["old-host"]);
  expect(d.reaped).toEqual([[6161]]);
});

itOnBothProviders("adoption", "a dead node's lease renewed just after its last heartbeat is waited for, not skipped", async (db) => {
  const { session, node, events } = await seed(db);
  const now = Date.now();
  // dead by its heartbeat (older than the lease time), but its lease renewed 300 ms after that beat
  await node("dead", "host-1", now - 6_001);
  const { running, approval } = await deadNodeSessions(db, session, events);
  await db.sessionLease.create({ data: { sessionId: running.id, ownerId: "dead", expiresAt: new Date(now + 300) } });

  const b = adopter(db, "node-b", "host-1", { now: () => Date.now() });
  const [report] = await b.adoption.run();
  expect(report?.sessions).toContain(running.id);
  expect(await notices(db, running.id)).toEqual([expect.objectContaining({ phase: "turn-interrupted" })]);
  expect(await db.approval.findUnique({ where: { id: approval.id } })).toMatchObject({ status: "cancelled" });
  expect(await db.session.findUnique({ where: { id: running.id } })).toMatchObject({ status: "stopped", pid: null });
  expect(await db.sessionLease.count()).toBe(0);
});

itOnBothProviders("adoption", "a command's claim on a session being settled waits for the settle, so its prompt is not refused as the dead node's", async (db) => {
  const { session, node, events } = await seed(db);
  await node("dead", "host-1", t0 - 6_001);
  await node("node-b", "host-1", t0);
  const { unread } = await deadNodeSessions(db, session, events);
  // the adopter's settle blocks in its first step (the reap) until released
  let releaseReap!: () => void;
  let reaping!: () => void;
  const inReap = new Promise<void>((r) => (reaping = r));
  const b = adopter(db, "node-b", "host-1", {
    reap: async (pids) => {
      reaping();
      await new Promise<void>((r) => (releaseReap = r));
      return { reaped: pids, survived: [] };
    },
  });
  const keeper = new LeaseKeeper({ db, selfId: "node-b", log, now: () => t0 });
  keeper.gateClaims((id) => b.adoption.settled(id));
  const run = b.adoption.run();
  await inReap;
  expect(b.adoption.settled(unread.id)).toBeDefined();
  // a prompt for the session reaches this node's hub now: its claim waits for the settle
  let claimedAt: "before" | "after" | undefined;
  let settledYet = false;
  const claim = keeper.claim(unread.id).then((r) => {
    claimedAt = settledYet ? "after" : "before";
    return r;
  });
  await new Promise((r) => setTimeout(r, 100));
  expect(claimedAt).toBeUndefined();
  settledYet = true;
  releaseReap();
  await run;
  expect(await claim).toEqual({ heldAlready: false });
  expect(claimedAt).toBe("after");
  expect(b.adoption.settled(unread.id)).toBeUndefined();
  // the dead node's prompt was refused before the claim; the lease is this node's own now
  expect(await notices(db, unread.id)).toEqual([expect.objectContaining({ phase: "prompt-refused" })]);
  expect(await db.sessionLease.findUnique({ where: { sessionId: unread.id } })).toMatchObject({ ownerId: "node-b" });
  // a session nobody settles is claimed at once
  expect(b.adoption.settled("another")).toBeUndefined();
});

itOnBothProviders("adoption", "a session this node's hub took over before the adoption reached it is left alone: its new turn is not settled, its lease stays", async (db) => {
  const { session, node, events } = await seed(db);
  await node("dead", "host-1", t0 - 6_001);
  await node("node-b", "host-1", t0);
  const { unread } = await deadNodeSessions(db, session, events);
  // node-b's hub takes the session over for a prompt (the dead node's lease is gone) and logs it
  const keeper = new LeaseKeeper({ db, selfId: "node-b", log, now: () => t0 });
  await keeper.claim(unread.id);
  const lease = await db.sessionLease.findUniqueOrThrow({ where: { sessionId: unread.id } });
  await db.sessionEvent.create({ data: { sessionId: unread.id, seq: 2, kind: "prompt", payload: JSON.stringify({ text: "again", uuid: "u9" }) } });
  const b = adopter(db, "node-b", "host-1");
  const [report] = await b.adoption.run();
  expect(report?.sessions).not.toContain(unread.id);
  // no notice for the live turn's prompt, the hub's lease untouched (same generation), the row not stopped
  expect(await notices(db, unread.id)).toEqual([]);
  expect(await db.sessionLease.findUnique({ where: { sessionId: unread.id } })).toMatchObject({ ownerId: "node-b", generation: lease.generation });
  expect(await db.session.findUnique({ where: { id: unread.id } })).toMatchObject({ status: "starting" });
  expect(keeper.holds(unread.id)).toBe(true);
});
