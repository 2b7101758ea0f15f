// Two sidecars in one process on one PostgreSQL database and one Redis, as main.ts wires them
// with REDIS_URL set: commands sent to B reach the session's owner A, A's events reach B's
// subscribers, a decision made on B answers A's CLI, and an owner that never answers gives
// `unavailable` in bounded time. The real CLI against the scripted model.
import { randomBytes } from "node:crypto";
import pino from "pino";
import type { Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/server/db/client";
import { withScratchPgDatabase } from "@/server/db/migrations";
import { listSessionEvents } from "@/server/db/session-events";
import { pgTests } from "@/server/db/test-support";
import { callTool, say } from "@/server/model-server/scenario";
import type { Ack } from "@/server/shared/wire/ack";
import type { ApprovalView } from "@/server/shared/wire/approval";
import { onSessionEvents, type PresenceChanged, type SessionView, type SubscribeResult, type WireEvent } from "@/server/shared/wire/session";
import { createSessionRunner } from "@/server/sidecar/session/session-runner";
import { toWireEvent } from "@/server/db/session-wire-event";
import { startCliEnv, type CliEnv } from "@/test/cli-env";
import { createSessionFixtures, type SessionFixtures, type TestUser } from "@/test/session-fixtures";
import { startTestSidecar, testSidecarSecret, type TestSidecar } from "@/test/sidecar-fixture";
import { until } from "@/test/until";
import { createBusSigner } from "./bus-signing";
import { deriveClusterKeys } from "./cluster-keys";
import { createCommandBus, type CommandBus } from "./command-bus";
import { connectRedis, type RedisConnection } from "./redis-connection";

const log = pino({ level: "silent" });
const redisUrl = process.env.CONDUIT_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

let counter = 0;
const commandId = () => `cmd-${++counter}-${randomBytes(4).toString("hex")}`;

/** One browser tab: its log keyed by seq, as the browser's reducer keeps it (each seq once). */
class Client {
  readonly bySeq = new Map<number, WireEvent>();
  readonly requested: ApprovalView[] = [];
  readonly presence: PresenceChanged[] = [];
  readonly counts: number[] = [];
  subscribed: string | undefined;

  constructor(readonly socket: Socket) {
    onSessionEvents(socket, (event) => {
      if (event.sessionId === this.subscribed && !this.bySeq.has(event.seq)) this.bySeq.set(event.seq, event);
    });
    socket.on("approval:requested", (view: ApprovalView) => this.requested.push(view));
    socket.on("presence:changed", (p: PresenceChanged) => this.presence.push(p));
    socket.on("approval:count", (c: { pending: number }) => this.counts.push(c.pending));
  }

  get events(): WireEvent[] {
    return [...this.bySeq.values()].sort((a, b) => a.seq - b.seq);
  }

  command<T>(name: string, payload: unknown): Promise<Ack<T>> {
    return this.socket.timeout(40_000).emitWithAck(name, payload) as Promise<Ack<T>>;
  }

  /** Subscribes page by page from `afterSeq`, applying each snapshot inside its ack. */
  async subscribe(sessionId: string, afterSeq = 0): Promise<void> {
    this.subscribed = sessionId;
    let after = afterSeq;
    for (;;) {
      const ack = await new Promise<Ack<SubscribeResult>>((resolve, reject) =>
        this.socket.timeout(30_000).emit("session:subscribe", { sessionId, afterSeq: after }, (err: Error | null, a: Ack<SubscribeResult>) => {
          if (err) return reject(err);
          if (a.ok) {
            if (a.data.reset) this.bySeq.clear();
            for (const e of a.data.events) if (!this.bySeq.has(e.seq)) this.bySeq.set(e.seq, e);
          }
          resolve(a);
        }),
      );
      if (!ack.ok) throw new Error(ack.error.message);
      if (!ack.data.hasMore) return;
      after = ack.data.nextAfterSeq;
    }
  }
}

const comparable = (events: WireEvent[]) =>
  events.map((e) => ({ seq: e.seq, kind: e.kind, payload: e.payload, trimmed: e.trimmed, at: e.at }));

async function logOf(db: Db, sessionId: string): Promise<WireEvent[]> {
  return (await listSessionEvents(db, sessionId, 0)).map((r) => toWireEvent(r));
}

const isResult = (e: WireEvent) => e.kind === "cli" && (e.payload as { type?: string }).type === "result";

// Skipped only with CONDUIT_SKIP_PG=1, an explicit opt-out; without PostgreSQL and without it, the suite fails.
// Redis is no skip condition: the tests connect to CONDUIT_TEST_REDIS_URL (default redis://127.0.0.1:6379).
describe.skipIf(pgTests.skip)("two sidecars on PostgreSQL and Redis", () => {
  let cli: CliEnv;
  let fx: SessionFixtures;
  let a: TestSidecar;
  let b: TestSidecar;
  const suffix = randomBytes(4).toString("hex");
  const idA = `node-a-${suffix}`;
  const idB = `node-b-${suffix}`;
  let release: (() => void) | undefined;
  let scratch: Promise<void> | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;

  /**
   * Both nodes' heartbeats and lease renewals (NodeHeartbeat's job in main.ts): A's host has more
   * free memory, so new sessions start there (two hosts: nodes of one host share its memory).
   */
  async function beat(): Promise<void> {
    const now = new Date();
    for (const [id, freeMb] of [
      [idA, 9_000],
      [idB, 1_000],
    ] as const) {
      await fx.db.sidecarNode.upsert({
        where: { id },
        create: { id, host: `test-${id}`, pid: process.pid, startedAt: now, heartbeatAt: now, freeMb },
        update: { heartbeatAt: now, freeMb },
      });
    }
    await Promise.all([a?.leases?.renew(), b?.leases?.renew()]);
  }

  /** A lease written by hand: `ownerId` (a node that does not exist) runs the session. */
  async function lease(sessionId: string, ownerId: string): Promise<void> {
    const expiresAt = new Date(Date.now() + 3_600_000);
    await fx.db.sessionLease.upsert({
      where: { sessionId },
      create: { sessionId, ownerId, expiresAt },
      update: { ownerId, expiresAt },
    });
  }

  async function startNode(id: string, forwardTimeoutMs?: number): Promise<TestSidecar> {
    return startTestSidecar(fx, {
      sidecarId: id,
      approvals: true,
      leases: true,
      log,
      cluster: { redisUrl, prefix: `conduit-test-${suffix}`, ...(forwardTimeoutMs ? { forwardTimeoutMs } : {}) },
      createRunner: (options, decidePermission) =>
        createSessionRunner(options, { cliPath: cli.cliPath, decidePermission, baseEnv: cli.env }),
    });
  }

  const open = async (node: TestSidecar, user: TestUser) => new Client(await node.connect(user));

  /** A session created through a client of B: it starts on A (the most free memory), whose hub claims its lease. */
  async function newSession(client: Client): Promise<string> {
    const created = await client.command<SessionView>("session:create", {
      workspace: fx.workspace.slug,
      mode: "default",
      commandId: commandId(),
    });
    if (!created.ok) throw new Error(created.error.message);
    await until(async () => (await fx.db.sessionLease.findUnique({ where: { sessionId: created.data.id } }))?.ownerId === idA, 20_000, "A's lease");
    return created.data.id;
  }

  beforeAll(async () => {
    cli = await startCliEnv();
    cli.server.addScenario("slow", [say(Array.from({ length: 40 }, (_, i) => `word${i} `).join(""), { chunkDelayMs: 60 })]);
    cli.server.addScenario("write", [callTool("Write", { file_path: "from-b.txt", content: "decided on B\n" }), say("written")]);
    // The scratch database lives until afterAll releases it.
    const ready = new Promise<string>((resolveUrl) => {
      scratch = withScratchPgDatabase(pgTests.serverUrl(), (url) => {
        resolveUrl(url);
        return new Promise<void>((done) => (release = done));
      });
    });
    fx = await createSessionFixtures({ rootPath: cli.cwd, url: await ready });
    await beat();
    heartbeat = setInterval(() => void beat().catch(() => undefined), 1_000);
    a = await startNode(idA);
    b = await startNode(idB);
  }, 90_000);

  afterAll(async () => {
    if (heartbeat) clearInterval(heartbeat);
    await b?.close();
    await a?.close();
    await fx?.db.$disconnect();
    release?.();
    await scratch;
    await fx?.close().catch(() => undefined);
    await cli?.close();
  }, 60_000);

  it("a client on B creates and prompts a session A runs, and its view ends equal to the database log", async () => {
    const onB = await open(b, fx.owner);
    const sessionId = await newSession(onB);
    // Created on A: A's hub holds it, B's does not.
    expect((await a.hub.liveViews(fx.workspace.id)).map((v) => v.id)).toContain(sessionId);
    expect((await b.hub.liveViews(fx.workspace.id)).map((v) => v.id)).not.toContain(sessionId);

    await onB.subscribe(sessionId);
    const id = commandId();
    const [first, retried] = await Promise.all([
      onB.command<{ seq: number }>("session:prompt", { sessionId, text: "[scenario:slow] go", commandId: id }),
      onB.command<{ seq: number }>("session:prompt", { sessionId, text: "[scenario:slow] go", commandId: id }),
    ]);
    expect(first).toMatchObject({ ok: true });
    expect(retried).toEqual(first);
    // A late subscriber on B joins mid-stream.
    const late = await open(b, fx.editor);
    await until(() => onB.events.filter((e) => e.kind === "cli").length >= 5, 30_000, "stream started on B");
    await late.subscribe(sessionId);
    await until(() => onB.events.some(isResult), 40_000, "result reached B");
    await until(async () => (await a.hub.view(sessionId)).status === "idle", 30_000, "idle on A");
    const stored = await logOf(fx.db, sessionId);
    await until(() => onB.events.length === stored.length && late.events.length === stored.length, 10_000, "B's clients caught up");

    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
    expect(comparable(onB.events)).toEqual(comparable(stored));
    expect(comparable(late.events)).toEqual(comparable(stored));
    expect(stored.filter((e) => e.kind === "prompt")).toHaveLength(1);
    // A retry after the answer, through B again, gets the same answer and runs nothing.
    expect(await onB.command<{ seq: number }>("session:prompt", { sessionId, text: "[scenario:slow] go", commandId: id })).toEqual(first);
    expect((await logOf(fx.db, sessionId)).filter((e) => e.kind === "prompt")).toHaveLength(1);
    // The workspace list on B shows the session A runs.
    const watched = await onB.command<{ sessions: SessionView[] }>("workspace:watch", { workspace: fx.workspace.slug });
    expect(watched.ok && watched.data.sessions.map((s) => s.id)).toContain(sessionId);
    // Presence spans the nodes: a viewer on A and two on B are three people, announced on both nodes.
    const onA = await open(a, fx.viewer);
    await onA.subscribe(sessionId, stored.length);
    const everyone = [fx.owner.id, fx.editor.id, fx.viewer.id].sort();
    const ids = (c: Client) => c.presence.filter((p) => p.sessionId === sessionId).at(-1)?.viewers.map((v) => v.userId).sort();
    await until(() => JSON.stringify(ids(onA)) === JSON.stringify(everyone) && JSON.stringify(ids(onB)) === JSON.stringify(everyone), 10_000, "presence across nodes");
    late.socket.disconnect();
    const twoLeft = [fx.owner.id, fx.viewer.id].sort();
    await until(() => JSON.stringify(ids(onA)) === JSON.stringify(twoLeft), 10_000, "a viewer on B left, seen on A");

    // The other owner-bound commands too: a control read needs A's live CLI, a rename A's entry.
    const commands = await onB.command<{ commands: { name: string }[] }>("session:slash-commands", { sessionId });
    expect(commands.ok && commands.data.commands.length).toBeGreaterThan(0);
    expect(await onB.command("session:rename", { sessionId, title: "Renamed on B", commandId: commandId() })).toMatchObject({ ok: true });
    expect((await a.hub.view(sessionId)).title).toBe("Renamed on B");
    await onB.command("session:stop", { sessionId, commandId: commandId() });
  }, 120_000);

  it("a decision made on B answers A's CLI", async () => {
    const onB = await open(b, fx.owner);
    const sessionId = await newSession(onB);
    await onB.subscribe(sessionId);
    const sent = await onB.command("session:prompt", { sessionId, text: "[scenario:write] go", commandId: commandId() });
    expect(sent.ok).toBe(true);
    // The question waits on A; B's socket hears of it through the user's room.
    await until(() => onB.requested.some((v) => v.sessionId === sessionId), 40_000, "approval on B");
    const approval = onB.requested.find((v) => v.sessionId === sessionId)!;
    expect(a.approvals?.pendingCount).toBe(1);
    // B's inbox lists the question A holds, and B's socket hears the count of every node's questions.
    await until(() => onB.counts.at(-1) === 1, 10_000, "count of one on B");
    const inbox = await onB.command<{ approvals: ApprovalView[] }>("approval:list", {});
    expect(inbox.ok && inbox.data.approvals.find((v) => v.id === approval.id)?.status).toBe("pending");
    const decision = { behavior: "allow" as const, reviewedText: "decided on B\n" };
    const id = commandId();
    const decided = await onB.command<ApprovalView>("approval:decide", { approvalId: approval.id, decision, commandId: id });
    expect(decided).toMatchObject({ ok: true, data: { status: "allowed", decidedBy: { id: fx.owner.id } } });
    // A retry through B is answered with the same outcome, once.
    expect(await onB.command<ApprovalView>("approval:decide", { approvalId: approval.id, decision, commandId: id })).toEqual(decided);
    await until(() => onB.events.some(isResult), 40_000, "the turn ended");
    await until(() => onB.counts.at(-1) === 0, 10_000, "count back to zero on B");
    const row = await fx.db.approval.findUnique({ where: { id: approval.id } });
    expect(row?.status).toBe("allowed");
    const toolResults = cli.server.requests.filter((r) => r.scenario === "write").flatMap((r) => r.toolResults);
    expect(toolResults.some((t) => !t.isError)).toBe(true);
    expect(await fx.db.auditLog.count({ where: { objectId: approval.id, action: "approval.allow" } })).toBe(1);
    await onB.command("session:stop", { sessionId, commandId: commandId() });
  }, 120_000);

  it("the owner trusts no message it cannot verify, and checks each forwarded command's actor itself; the adapter's stream holds no event text", async () => {
    const prefix = `conduit-test-${suffix}`;
    const onB = await open(b, fx.owner);
    const sessionId = await newSession(onB);
    await onB.subscribe(sessionId);
    const token = `SEALED-TOKEN-${randomBytes(6).toString("hex")}`;
    expect(await onB.command("session:prompt", { sessionId, text: `[scenario:write] go ${token}`, commandId: commandId() })).toMatchObject({ ok: true });
    await until(() => onB.requested.some((v) => v.sessionId === sessionId), 40_000, "approval on B");
    const approval = onB.requested.find((v) => v.sessionId === sessionId)!;
    // The prompt event crossed from A to B's client, through the stream.
    expect(onB.events.some((e) => JSON.stringify(e.payload).includes(token))).toBe(true);

    let raw: RedisConnection | undefined;
    let rogue: CommandBus | undefined;
    try {
      raw = await connectRedis(redisUrl, log);
      // Read from the stream as anyone with Redis's password could: ciphertext only.
      const entries = (await raw.client.xRange(`${prefix}:socket.io`, "-", "+")) ?? [];
      expect(entries.length).toBeGreaterThan(0);
      const stored = JSON.stringify(entries);
      expect(stored).not.toContain(token);
      expect(stored).not.toContain(sessionId);

      const requests = `${prefix}:node:${idA}:requests`;
      const viewer = { id: fx.viewer.id, name: fx.viewer.name };
      const editor = { id: fx.editor.id, name: fx.editor.name };
      const setMode = (actor: { id: string; name: string }, mode: string, allowBypass: boolean) => ({ actor, sessionId, mode, commandId: commandId(), allowBypass });
      const decide = (user: { id: string; name: string }) => ({ user, approvalId: approval.id, decision: { behavior: "allow", reviewedText: "forged\n" }, commandId: commandId() });
      const unsigned = (method: string, payload: unknown) => JSON.stringify({ id: randomBytes(8).toString("hex"), from: idB, method, payload, deadline: Date.now() + 10_000 });
      const foreign = createBusSigner({ key: randomBytes(32), selfId: idB });
      const request = (method: string, payload: unknown) => ({ id: randomBytes(8).toString("hex"), method, payload, deadline: Date.now() + 10_000 });
      // Forged straight into A's list: as the bus's old plain JSON, and signed with a key not the cluster's.
      await raw.client.rPush(requests, unsigned("session.setMode", setMode(editor, "bypassPermissions", true)));
      await raw.client.rPush(requests, unsigned("approval.decide", decide(editor)));
      await raw.client.rPush(requests, foreign.sign(idA, "request", request("session.setMode", setMode(editor, "acceptEdits", true))));
      await raw.client.rPush(requests, foreign.sign(idA, "request", request("approval.decide", decide(editor))));

      // A node that holds the secret, forwarding what the socket layer would have refused: A refuses it too.
      const keys = await deriveClusterKeys(testSidecarSecret);
      rogue = await createCommandBus({ redis: raw, selfId: `node-x-${suffix}`, prefix, log, key: keys.busMac, checkFor: () => async (x) => x, timeoutMs: 10_000 });
      await expect(rogue.request(idA, "session.setMode", setMode(viewer, "plan", false))).rejects.toMatchObject({ code: "forbidden" });
      await expect(rogue.request(idA, "session.prompt", { actor: { id: "nobody", name: "N" }, sessionId, text: "hi", commandId: commandId() })).rejects.toMatchObject({
        code: "not_found",
      });
      // allowBypass is the workspace's, as A reads it (this one does not allow bypass), not the message's.
      await expect(rogue.request(idA, "session.setMode", setMode(editor, "bypassPermissions", true))).rejects.toMatchObject({
        code: "forbidden",
        message: expect.stringContaining("bypassPermissions is not enabled"),
      });
      await expect(
        rogue.request(idA, "session.create", { actor: viewer, access: { workspace: fx.workspace, role: "owner" }, input: { mode: "default", commandId: commandId() } }),
      ).rejects.toMatchObject({ code: "forbidden" });
      await expect(rogue.request(idA, "session.manage.remove", { actor: editor, sessionId, confirm: "x" })).rejects.toMatchObject({ code: "forbidden" });
      await expect(rogue.request(idA, "approval.decide", decide(viewer))).rejects.toMatchObject({ code: "forbidden" });

      // Nothing changed: the mode, the pending question, its row.
      await until(async () => (await raw!.client.lLen(requests)) === 0, 10_000, "A read its list");
      expect((await a.hub.view(sessionId)).mode).toBe("default");
      expect(a.approvals?.holds(approval.id)).toBe(true);
      expect((await fx.db.approval.findUnique({ where: { id: approval.id } }))?.status).toBe("pending");
      expect(await fx.db.auditLog.count({ where: { objectId: approval.id } })).toBe(0);
    } finally {
      await rogue?.close();
      await raw?.close();
    }
    // The owner's own decision, through B, still goes through.
    const decided = await onB.command<ApprovalView>("approval:decide", { approvalId: approval.id, decision: { behavior: "deny", message: "no" }, commandId: commandId() });
    expect(decided).toMatchObject({ ok: true, data: { status: "denied" } });
    await onB.command("session:stop", { sessionId, commandId: commandId() });
  }, 120_000);

  it("a session nobody runs starts on the node it is prompted on; a prompt on the other node then follows it there", async () => {
    const onB = await open(b, fx.owner);
    const sessionId = await newSession(onB);
    await onB.command("session:stop", { sessionId, commandId: commandId() });
    // The lease gone (as after an adoption): A's next renewal finds it lost and lets the session go.
    await fx.db.sessionLease.delete({ where: { sessionId } });
    await until(() => a.leases?.holds(sessionId) === false, 20_000, "A let the session go");
    // Nobody runs it: B runs it itself (its hub claims the lease).
    expect(await onB.command("session:prompt", { sessionId, text: "first on B", commandId: commandId() })).toMatchObject({ ok: true });
    expect((await fx.db.sessionLease.findUnique({ where: { sessionId } }))?.ownerId).toBe(idB);
    await until(async () => (await logOf(fx.db, sessionId)).filter(isResult).length === 1, 40_000, "B's turn ended");
    // A client on A now reaches B.
    const onA = await open(a, fx.editor);
    expect(await onA.command("session:prompt", { sessionId, text: "then from A", commandId: commandId() })).toMatchObject({ ok: true });
    await until(async () => (await logOf(fx.db, sessionId)).filter(isResult).length === 2, 40_000, "the second turn ended");
    expect((await fx.db.sessionLease.findUnique({ where: { sessionId } }))?.ownerId).toBe(idB);
    const stored = await logOf(fx.db, sessionId);
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
    expect(stored.filter((e) => e.kind === "prompt").map((e) => (e.payload as { text: string }).text)).toEqual(["first on B", "then from A"]);
    await onB.command("session:stop", { sessionId, commandId: commandId() });
  }, 120_000);

  it("an owner that does not answer gives unavailable in bounded time", async () => {
    const onB = await open(b, fx.owner);
    const sessionId = await newSession(onB);
    await onB.command("session:stop", { sessionId, commandId: commandId() });
    await lease(sessionId, `ghost-${suffix}`);
    // A third sidecar that waits 1.5 s for an owner: the answer says so.
    const c = await startNode(`node-c-${suffix}`, 1_500);
    const onC = await open(c, fx.owner);
    const sent = await onC.command("session:prompt", { sessionId, text: "hello", commandId: commandId() });
    await c.close();
    expect(sent).toMatchObject({ ok: false, error: { code: "unavailable" } });
    expect(!sent.ok && sent.error.message).toMatch(new RegExp(`ghost-${suffix}\\) did not answer within 1.5 s`));
    // Nothing was run anywhere: no prompt in the log.
    expect((await logOf(fx.db, sessionId)).filter((e) => e.kind === "prompt")).toHaveLength(0);
  }, 60_000);
});
