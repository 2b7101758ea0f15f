import pino from "pino";
import type { Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listSessionEvents } from "@/server/db/session-events";
import { say } from "@/server/model-server/scenario";
import type { Ack } from "@/server/shared/wire/ack";
import {
  onSessionEvents,
  subscribePage,
  type PresenceChanged,
  type SessionView,
  type SubscribeResult,
  type WireEvent,
} from "@/server/shared/wire/session";
import type { CreateRunner } from "@/server/sidecar/session/session-hub";
import { createSessionRunner } from "@/server/sidecar/session/session-runner";
import { toWireEvent } from "@/server/db/session-wire-event";
import { startCliEnv, type CliEnv } from "@/test/cli-env";
import { fakeRunnerFactory, type FakeSessionRunner } from "@/test/fake-session-runner";
import { createSessionFixtures, type SessionFixtures, type TestUser } from "@/test/session-fixtures";
import { startTestSidecar } from "@/test/sidecar-fixture";
import { until } from "@/test/until";

const log = pino({ level: "silent" });

/** One browser tab: its socket and the event list it builds the way the UI does. */
class Client {
  readonly events: WireEvent[] = [];
  readonly statuses: SessionView[] = [];
  readonly presence: PresenceChanged[] = [];
  /** How many events each `session:events` message carried. */
  readonly bursts: number[] = [];
  subscribed: string | undefined;

  constructor(readonly socket: Socket) {
    onSessionEvents(socket, (event) => {
      if (event.sessionId === this.subscribed) this.events.push(event);
    });
    socket.on("session:events", (events: WireEvent[]) => this.bursts.push(events.length));
    socket.on("session:status", (view: SessionView) => this.statuses.push(view));
    socket.on("presence:changed", (p: PresenceChanged) => this.presence.push(p));
  }

  get lastSeq(): number {
    return this.events.at(-1)?.seq ?? 0;
  }

  command<T>(name: string, payload: unknown): Promise<Ack<T>> {
    return this.socket.timeout(30_000).emitWithAck(name, payload) as Promise<Ack<T>>;
  }

  /**
   * Subscribes from the last seq it holds and applies the snapshot (a reset replaces the list).
   * The snapshot is applied inside the ack callback: live events that follow the ack on the wire
   * may be dispatched before an `await` on the ack resumes.
   */
  subscribe(sessionId: string, afterSeq = this.lastSeq): Promise<Ack<SubscribeResult>> {
    this.subscribed = sessionId;
    return new Promise((resolve, reject) => {
      this.socket
        .timeout(30_000)
        .emit("session:subscribe", { sessionId, afterSeq }, (err: Error | null, ack: Ack<SubscribeResult>) => {
          if (err) return reject(err);
          if (ack.ok) {
            if (ack.data.reset) this.events.length = 0;
            this.events.push(...ack.data.events);
          }
          resolve(ack);
        });
    });
  }

  /** Subscribes page by page, as the browser does, until the last page; returns the page count. */
  async subscribeAll(sessionId: string, afterSeq = this.lastSeq): Promise<number> {
    let pages = 0;
    let after = afterSeq;
    for (;;) {
      const ack = await this.subscribe(sessionId, after);
      if (!ack.ok) throw new Error(ack.error.message);
      pages += 1;
      expect(ack.data.events.length).toBeLessThanOrEqual(subscribePage.maxEvents);
      if (!ack.data.hasMore) return pages;
      after = ack.data.nextAfterSeq;
    }
  }
}

let counter = 0;
const commandId = () => `cmd-${++counter}-${Math.random().toString(36).slice(2, 10)}`;
const seqs = (events: { seq: number }[]) => events.map((e) => e.seq);


/** A sidecar with the session handlers on a hub made by `createRunner`; `open` connects a Client. */
async function startServer(fx: SessionFixtures, createRunner: CreateRunner) {
  const sidecar = await startTestSidecar(fx, { createRunner, log });
  return {
    hub: sidecar.hub,
    open: async (user: TestUser) => new Client(await sidecar.connect(user)),
    close: () => sidecar.close(),
  };
}

/** The database log as a subscriber would see it. */
async function logOf(fx: SessionFixtures, sessionId: string) {
  const rows = await listSessionEvents(fx.db, sessionId, 0);
  return rows.map((r) => toWireEvent(r));
}

/** What must be identical between a client's list and the log (user names aside). */
const comparable = (events: WireEvent[]) =>
  events.map((e) => ({ seq: e.seq, kind: e.kind, payload: e.payload, trimmed: e.trimmed, at: e.at }));

describe("session sockets with the real CLI", () => {
  let cli: CliEnv;
  let fx: SessionFixtures;
  let server: Awaited<ReturnType<typeof startServer>>;
  let sessionId: string;
  let ownerClient: Client;

  beforeAll(async () => {
    cli = await startCliEnv();
    cli.server.addScenario("slow", [
      say(Array.from({ length: 30 }, (_, i) => `word${i} `).join(""), { chunkDelayMs: 100 }),
    ]);
    fx = await createSessionFixtures({ rootPath: cli.cwd });
    server = await startServer(fx, (options, decidePermission) =>
      createSessionRunner(options, { cliPath: cli.cliPath, decidePermission, baseEnv: cli.env }),
    );
    ownerClient = await server.open(fx.owner);
    const created = await ownerClient.command<SessionView>("session:create", {
      workspace: fx.workspace.slug,
      mode: "default",
      commandId: commandId(),
    });
    if (!created.ok) throw new Error(created.error.message);
    sessionId = created.data.id;
  });

  afterAll(async () => {
    await server?.close();
    await cli?.close();
    await fx?.close();
  });

  /** Waits until the session is idle again and every client holds the whole log. */
  async function settle(...clients: Client[]): Promise<void> {
    await until(async () => (await server.hub.view(sessionId)).status === "idle", 30_000, "session idle");
    await until(
      async () => {
        const last = (await server.hub.view(sessionId)).lastSeq;
        return clients.every((c) => c.lastSeq === last);
      },
      10_000,
      "clients caught up",
    );
  }

  it("streams one prompt identically, gap-free and in order to two subscribers, equal to the database log", async () => {
    const editorClient = await server.open(fx.editor);
    const a = await ownerClient.subscribe(sessionId, 0);
    expect(a).toMatchObject({ ok: true, data: { reset: false, session: { id: sessionId } } });
    const b = await editorClient.subscribe(sessionId, 0);
    expect(b.ok && b.data.viewers.map((v) => v.userId).sort()).toEqual([fx.owner.id, fx.editor.id].sort());
    await until(() => ownerClient.presence.some((p) => p.viewers.length === 2), 5_000, "presence of two");

    const sent = await ownerClient.command<{ seq: number }>("session:prompt", {
      sessionId,
      text: "Hello there",
      commandId: commandId(),
    });
    expect(sent.ok).toBe(true);
    await until(
      () => ownerClient.events.some((e) => e.kind === "cli" && (e.payload as { type?: string }).type === "result"),
      30_000,
      "result",
    );
    await settle(ownerClient, editorClient);

    const stored = await logOf(fx, sessionId);
    expect(seqs(stored)).toEqual(stored.map((_, i) => i + 1));
    expect(comparable(ownerClient.events)).toEqual(comparable(stored));
    expect(comparable(editorClient.events)).toEqual(comparable(stored));
    const prompt = editorClient.events.find((e) => e.kind === "prompt");
    expect(prompt).toMatchObject({ user: { id: fx.owner.id, name: fx.owner.name }, payload: { text: "Hello there" } });
    expect(stored.some((e) => e.kind === "cli" && (e.payload as { type?: string }).type === "assistant")).toBe(true);

    editorClient.socket.disconnect();
    await until(() => ownerClient.presence.at(-1)?.viewers.length === 1, 5_000, "presence after disconnect");
    expect(ownerClient.presence.at(-1)?.viewers).toEqual([{ userId: fx.owner.id, name: fx.owner.name }]);
  });

  it("a client that drops mid-turn and resubscribes from its last seq ends with exactly the log", async () => {
    const dropper = await server.open(fx.editor);
    await dropper.subscribe(sessionId, 0);
    const before = dropper.lastSeq;
    await ownerClient.command("session:prompt", { sessionId, text: "[scenario:slow] go", commandId: commandId() });
    await until(
      () => dropper.events.filter((e) => e.seq > before && e.kind === "cli").length >= 8,
      30_000,
      "stream started",
    );
    dropper.socket.disconnect();
    const heldAtDrop = dropper.lastSeq;
    await until(async () => (await server.hub.view(sessionId)).lastSeq > heldAtDrop + 5, 30_000, "events while away");
    dropper.socket.connect();
    await until(() => dropper.socket.connected, 5_000, "reconnected");
    const again = await dropper.subscribe(sessionId);
    expect(again).toMatchObject({ ok: true, data: { reset: false } });
    expect(again.ok && again.data.events[0]?.seq).toBe(heldAtDrop + 1);
    await settle(dropper, ownerClient);
    const stored = await logOf(fx, sessionId);
    expect(comparable(dropper.events)).toEqual(comparable(stored));
    expect(comparable(ownerClient.events)).toEqual(comparable(stored));
  });

  it("runs a prompt retried with the same commandId once", async () => {
    const id = commandId();
    const payload = { sessionId, text: "Only once, please", commandId: id };
    const [first, second] = await Promise.all([
      ownerClient.command<{ seq: number }>("session:prompt", payload),
      ownerClient.command<{ seq: number }>("session:prompt", payload),
    ]);
    await settle(ownerClient);
    const third = await ownerClient.command<{ seq: number }>("session:prompt", payload);
    expect(first.ok).toBe(true);
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    const stored = await listSessionEvents(fx.db, sessionId, 0);
    expect(stored.filter((r) => r.kind === "prompt" && r.commandId === id)).toHaveLength(1);
    // The model was asked once for this prompt (a second send would be a second turn).
    const modelCalls = cli.server.requests.filter(
      (r) => r.kind === "messages" && r.toolNames.length > 0 && r.prompt.includes("Only once, please"),
    );
    expect(modelCalls).toHaveLength(1);
    const turns = stored.filter(
      (r) => r.kind === "cli" && r.seq > (first.ok ? first.data.seq : 0) && JSON.parse(r.payload).type === "result",
    );
    expect(turns).toHaveLength(1);
  });

  it("switches the permission mode with the CLI's confirmation", async () => {
    const ack = await ownerClient.command<{ mode: string }>("session:set-mode", {
      sessionId,
      mode: "acceptEdits",
      commandId: commandId(),
    });
    expect(ack).toMatchObject({ ok: true, data: { mode: "acceptEdits" } });
    await until(
      () => ownerClient.statuses.some((s) => s.id === sessionId && s.mode === "acceptEdits"),
      5_000,
      "status with the new mode",
    );
    const bypass = await ownerClient.command("session:set-mode", {
      sessionId,
      mode: "bypassPermissions",
      commandId: commandId(),
    });
    expect(bypass).toMatchObject({ ok: false, error: { code: "forbidden" } });
  });

  it("refuses a viewer's prompt, interrupt, stop and mode change with forbidden, but lets them read", async () => {
    const viewer = await server.open(fx.viewer);
    expect((await viewer.subscribe(sessionId, 0)).ok).toBe(true);
    for (const [name, extra] of [
      ["session:prompt", { text: "let me in" }],
      ["session:interrupt", {}],
      ["session:stop", {}],
      ["session:set-mode", { mode: "plan" }],
      ["session:set-model", { model: "claude-test" }],
    ] as const) {
      const ack = await viewer.command(name, { sessionId, commandId: commandId(), ...extra });
      expect(ack).toMatchObject({
        ok: false,
        error: { code: "forbidden", message: expect.stringMatching(/Viewers can read/) },
      });
    }
    const create = await viewer.command("session:create", { workspace: fx.workspace.slug, commandId: commandId() });
    expect(create).toMatchObject({ ok: false, error: { code: "forbidden" } });
  });

  it("does not tell a non-member whether a session exists", async () => {
    const outsider = await server.open(fx.outsider);
    const existing = await outsider.command("session:subscribe", { sessionId, afterSeq: 0 });
    const missing = await outsider.command("session:subscribe", { sessionId: "c0000000000000000000nope", afterSeq: 0 });
    expect(existing).toMatchObject({ ok: false, error: { code: "not_found" } });
    expect(missing).toEqual(existing);
    const prompt = await outsider.command("session:prompt", { sessionId, text: "hi", commandId: commandId() });
    const promptMissing = await outsider.command("session:prompt", {
      sessionId: "c0000000000000000000nope",
      text: "hi",
      commandId: commandId(),
    });
    expect(prompt).toEqual(existing);
    expect(promptMissing).toEqual(existing);
    expect(await outsider.command("session:fetch-event", { sessionId, seq: 1 })).toEqual(existing);
    expect(await outsider.command("workspace:watch", { workspace: fx.workspace.slug })).toMatchObject({
      ok: false,
      error: { code: "not_found" },
    });
  });

  it("answers invalid payloads with invalid_payload and the socket stays usable", async () => {
    const client = await server.open(fx.editor);
    const bad = [
      {},
      { sessionId },
      { sessionId, text: "no command id" },
      { sessionId: 42, text: "x", commandId: commandId() },
      { sessionId, text: 42, commandId: commandId() },
      { sessionId, text: "   ", commandId: commandId() },
      { sessionId, text: "x".repeat(10 * 1024 * 1024), commandId: commandId() },
      "not an object",
      null,
    ];
    for (const payload of bad) {
      const ack = await client.command("session:prompt", payload);
      expect(ack).toMatchObject({ ok: false, error: { code: "invalid_payload" } });
    }
    expect(await client.command("session:subscribe", { sessionId, afterSeq: -1 })).toMatchObject({
      ok: false,
      error: { code: "invalid_payload" },
    });
    expect(await client.command("session:set-mode", { sessionId, mode: "yolo", commandId: commandId() })).toMatchObject(
      { ok: false, error: { code: "invalid_payload" } },
    );
    expect(client.socket.connected).toBe(true);
    expect(await client.command("system:whoami", {})).toMatchObject({ ok: true, data: { id: fx.editor.id } });
    expect((await client.subscribe(sessionId, 0)).ok).toBe(true);
  });

  it("gives a client that is ahead of the server the whole log, flagged reset", async () => {
    const client = await server.open(fx.editor);
    const stored = await logOf(fx, sessionId);
    const ack = await client.command<SubscribeResult>("session:subscribe", {
      sessionId,
      afterSeq: stored.length + 100,
    });
    expect(ack.ok && ack.data.reset).toBe(true);
    expect(ack.ok && comparable(ack.data.events)).toEqual(comparable(stored));
  });

  it("returns a whole event on fetch, and tells workspace watchers about status changes", async () => {
    const watcher = await server.open(fx.viewer);
    const watched = await watcher.command<{ workspaceId: string; sessions: SessionView[] }>("workspace:watch", {
      workspace: fx.workspace.slug,
    });
    expect(watched).toMatchObject({ ok: true, data: { workspaceId: fx.workspace.id } });
    expect(watched.ok && watched.data.sessions.map((s) => s.id)).toContain(sessionId);
    const fetched = await watcher.command<WireEvent>("session:fetch-event", { sessionId, seq: 1 });
    expect(fetched).toMatchObject({ ok: true, data: { seq: 1, kind: "process", trimmed: false } });
    const stopId = commandId();
    await ownerClient.command("session:stop", { sessionId, commandId: stopId });
    // a retry of the same command is answered again but audited once
    await ownerClient.command("session:stop", { sessionId, commandId: stopId });
    const audits = await fx.db.auditLog.findMany({ where: { action: "session.stop", objectId: sessionId } });
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ actorId: fx.owner.id, workspaceId: fx.workspace.id, objectType: "session" });
    expect(JSON.parse(audits[0]!.details ?? "{}")).toMatchObject({ commandId: stopId });
    await until(
      () => watcher.statuses.some((s) => s.id === sessionId && s.status === "stopped"),
      15_000,
      "stopped status",
    );
    await until(
      async () => (await fx.db.session.findUniqueOrThrow({ where: { id: sessionId } })).status === "stopped",
      5_000,
      "row stopped",
    );
  });
});

describe("session sockets under load (fake CLI)", () => {
  let fx: SessionFixtures;
  let server: Awaited<ReturnType<typeof startServer>>;
  const factory = fakeRunnerFactory();

  beforeAll(async () => {
    fx = await createSessionFixtures();
    server = await startServer(fx, factory.create);
  });
  afterAll(async () => {
    await server?.close();
    await fx?.close();
  });

  it("subscribers joining while events flow get every event once, in order", async () => {
    const owner = await server.open(fx.owner);
    const created = await owner.command<SessionView>("session:create", {
      workspace: fx.workspace.slug,
      commandId: commandId(),
    });
    if (!created.ok) throw new Error(created.error.message);
    const id = created.data.id;
    const runner: FakeSessionRunner = factory.runners.at(-1)!;
    let flowing = true;
    const flow = (async () => {
      let n = 0;
      while (flowing) {
        for (let i = 0; i < 5; i++)
          runner.emitLine({ type: "stream_event", event: { type: "ping", n: n++ }, session_id: "s" });
        await new Promise((r) => setTimeout(r, 1));
      }
    })();
    const clients = await Promise.all(Array.from({ length: 8 }, (_, i) => server.open(i % 2 ? fx.editor : fx.viewer)));
    await Promise.all(
      clients.map(async (client, i) => {
        await new Promise((r) => setTimeout(r, 20 + i * 25));
        // page by page, as the browser does: under load the backlog can be longer than a page
        await client.subscribeAll(id, i * 3);
      }),
    );
    await new Promise((r) => setTimeout(r, 100));
    flowing = false;
    await flow;
    await until(async () => {
      const last = (await server.hub.view(id)).lastSeq;
      return clients.every((c) => c.lastSeq === last);
    });
    const stored = await logOf(fx, id);
    for (const [i, client] of clients.entries()) {
      expect(comparable(client.events)).toEqual(comparable(stored.slice(i * 3)));
    }
    // lines the CLI printed together went out together: a message per burst, not per event
    const live = owner.events.length === 0 ? clients[0]! : owner;
    expect(live.bursts.length).toBeGreaterThan(0);
    expect(Math.max(...live.bursts)).toBeGreaterThanOrEqual(5);
  });

  it("a backlog longer than a page comes page by page; events flowing meanwhile arrive once, in order, after the last page", async () => {
    const owner = await server.open(fx.owner);
    const created = await owner.command<SessionView>("session:create", {
      workspace: fx.workspace.slug,
      commandId: commandId(),
    });
    if (!created.ok) throw new Error(created.error.message);
    const id = created.data.id;
    const runner: FakeSessionRunner = factory.runners.at(-1)!;
    for (let n = 0; n < subscribePage.maxEvents * 3; n++) {
      runner.emitLine({ type: "stream_event", event: { type: "ping", n }, session_id: "s" });
    }
    await until(
      async () => (await server.hub.view(id)).lastSeq >= subscribePage.maxEvents * 3,
      20_000,
      "backlog stored",
    );
    let flowing = true;
    const flow = (async () => {
      let n = 0;
      while (flowing) {
        runner.emitLine({ type: "stream_event", event: { type: "live", n: n++ }, session_id: "s" });
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const clients = await Promise.all([server.open(fx.viewer), server.open(fx.editor), server.open(fx.owner)]);
    const pages = await Promise.all(
      clients.map(async (client, i) => {
        await new Promise((r) => setTimeout(r, i * 30));
        return client.subscribeAll(id, 0);
      }),
    );
    await new Promise((r) => setTimeout(r, 100));
    flowing = false;
    await flow;
    await until(async () => {
      const last = (await server.hub.view(id)).lastSeq;
      return clients.every((c) => c.lastSeq === last);
    });
    const stored = await logOf(fx, id);
    for (const [i, client] of clients.entries()) {
      expect(pages[i]).toBeGreaterThanOrEqual(4);
      expect(comparable(client.events)).toEqual(comparable(stored));
    }
  });
});
