import { existsSync } from "node:fs";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listSessionEvents } from "@/server/db/session-events";
import { AppError } from "@/server/shared/errors/app-error";
import {
  maxFetchEventChars,
  maxWirePayloadBytes,
  type SessionView,
  type WireEvent,
} from "@/server/shared/wire/session";
import { emitTurn, fakeRunnerFactory, type FakeRunnerScript, type FakeSessionRunner } from "@/test/fake-session-runner";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { SessionHub, type Actor, type SessionHubDeps, type SubscribeSnapshot } from "./session-hub";

const log = pino({ level: "silent" });
let fx: SessionFixtures;
let owner: Actor;

beforeAll(async () => {
  fx = await createSessionFixtures();
  owner = { id: fx.owner.id, name: fx.owner.name };
});
afterAll(async () => {
  await fx.close();
});

let counter = 0;
const commandId = () => `cmd-${++counter}-${Math.random().toString(36).slice(2, 10)}`;

function makeHub(script: FakeRunnerScript = {}, deps: Partial<SessionHubDeps> = {}) {
  const factory = fakeRunnerFactory(script);
  const hub = new SessionHub({
    db: fx.db,
    createRunner: factory.create,
    configRoot: path.join(fx.dataDir, "claude-config"),
    sidecarId: "test",
    log,
    ...deps,
  });
  const events: WireEvent[] = [];
  const views: SessionView[] = [];
  hub.onDidEmitEvent((e) => events.push(e));
  hub.onDidChangeStatus((v) => views.push(v));
  return { hub, factory, events, views };
}

const access = () => ({ workspace: fx.workspace, role: "owner" });

async function dbLog(sessionId: string) {
  return listSessionEvents(fx.db, sessionId, 0);
}

/** Waits until `check` holds (polling; the hub's writes are asynchronous). */
async function until(check: () => boolean | Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}

const seqs = (events: { seq: number }[]) => events.map((e) => e.seq);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("SessionHub", () => {
  it("stores a session's --max-budget-usd cap and passes it to every runner", async () => {
    const { hub, factory } = makeHub();
    const view = await hub.createSession(owner, access(), {
      mode: "default",
      maxBudgetUsd: 2.5,
      commandId: commandId(),
    });
    expect(factory.runners[0]!.options.maxBudgetUsd).toBe(2.5);
    const row = await fx.db.session.findUniqueOrThrow({ where: { id: view.id }, select: { maxBudgetUsd: true } });
    expect(row.maxBudgetUsd).toBe(2.5);
    await hub.close();
  });

  it("creates a session: row with a fresh claude session id, config dir per workspace, runner started, pid and status stored", async () => {
    const { hub, factory } = makeHub();
    const id = commandId();
    const view = await hub.createSession(owner, access(), { mode: "acceptEdits", model: "claude-test", commandId: id });
    const runner = factory.runners[0]!;
    expect(runner.options).toMatchObject({
      sessionId: view.id,
      workspaceRoot: fx.workspace.rootPath,
      configDir: path.join(fx.dataDir, "claude-config", fx.workspace.id),
      resume: false,
      permissionMode: "acceptEdits",
      model: "claude-test",
      allowBypass: false,
    });
    expect(existsSync(runner.options.configDir)).toBe(true);
    expect(view).toMatchObject({
      status: "idle",
      mode: "acceptEdits",
      createdBy: { id: owner.id, name: owner.name },
      workspaceSlug: "demo",
    });
    await until(
      async () =>
        (await fx.db.session.findUnique({ where: { id: view.id } }))?.pid != null && (await dbLog(view.id)).length >= 2,
    );
    const row = await fx.db.session.findUniqueOrThrow({ where: { id: view.id } });
    expect(row.claudeSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(runner.options.claudeSessionId).toBe(row.claudeSessionId);
    expect(row).toMatchObject({ status: "idle", sidecarId: "test", mode: "acceptEdits" });
    const log = await dbLog(view.id);
    expect(log[0]).toMatchObject({ seq: 1, kind: "process", commandId: id, userId: owner.id });
    expect(log[1]).toMatchObject({ seq: 2, kind: "process" });
    expect(JSON.parse(log[1]!.payload)).toMatchObject({ phase: "spawned", pid: row.pid });

    // the same commandId again: the same session, no second runner
    const again = await hub.createSession(owner, access(), {
      mode: "acceptEdits",
      model: "claude-test",
      commandId: id,
    });
    expect(again.id).toBe(view.id);
    expect(factory.runners).toHaveLength(1);
    await hub.close();

    // and after a restart of the sidecar, found in the log
    const second = makeHub();
    expect((await second.hub.createSession(owner, access(), { mode: "acceptEdits", commandId: id })).id).toBe(view.id);
    expect(second.factory.runners).toHaveLength(0);
    await second.hub.close();
  });

  it("refuses bypassPermissions where the workspace does not allow it, and a model name that is not one, before any row exists", async () => {
    const { hub, factory } = makeHub();
    const before = await fx.db.session.count();
    await expect(
      hub.createSession(owner, access(), { mode: "bypassPermissions", commandId: commandId() }),
    ).rejects.toMatchObject({ code: "forbidden" });
    await expect(
      hub.createSession(owner, access(), { mode: "default", model: "--dangerous", commandId: commandId() }),
    ).rejects.toMatchObject({ code: "invalid_payload" });
    expect(await fx.db.session.count()).toBe(before);
    expect(factory.runners).toHaveLength(0);
    await hub.close();
  });

  it("logs the prompt before the CLI's answer and announces every event after it is stored, in seq order", async () => {
    const { hub, factory, events } = makeHub({ onPrompt: (r, input) => emitTurn(r, input, "hello") });
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    const result = await hub.prompt(owner, view.id, "say hello", commandId());
    await until(() => events.filter((e) => e.sessionId === view.id).length >= 6);
    const mine = events.filter((e) => e.sessionId === view.id);
    const stored = await dbLog(view.id);
    expect(seqs(mine)).toEqual(range(1, stored.length));
    expect(mine.map((e) => e.payload)).toEqual(stored.map((r) => JSON.parse(r.payload)));
    const prompt = mine.find((e) => e.kind === "prompt")!;
    expect(prompt.seq).toBe(result.seq);
    expect(prompt).toMatchObject({ user: { id: owner.id, name: owner.name }, payload: { text: "say hello" } });
    expect(mine.findIndex((e) => e.kind === "cli")).toBeGreaterThan(mine.indexOf(prompt));
    expect(factory.runners[0]!.prompts).toEqual([
      { uuid: (prompt.payload as { uuid: string }).uuid, text: "say hello" },
    ]);
    await until(async () => (await hub.view(view.id)).tokens.input === 10);
    expect((await hub.view(view.id)).tokens).toEqual({ input: 10, output: 5, cacheRead: 0, cacheWrite: 0 });
    await hub.close();
  });

  it("allocates gap-free ordered seqs under concurrent commands and a streaming CLI", async () => {
    const { hub, factory, events } = makeHub();
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    const runner = factory.runners[0]!;
    const streaming = (async () => {
      for (let i = 0; i < 200; i++) {
        runner.emitLine({
          type: "stream_event",
          event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: `t${i}` } },
          session_id: "x",
        });
        if (i % 10 === 0) await new Promise((r) => setImmediate(r));
      }
    })();
    const prompts = await Promise.all(range(1, 20).map((i) => hub.prompt(owner, view.id, `p${i}`, commandId())));
    await streaming;
    const stored = await (async () => {
      await until(async () => (await dbLog(view.id)).length === 1 + 1 + 200 + 20);
      return dbLog(view.id);
    })();
    expect(seqs(stored)).toEqual(range(1, stored.length));
    expect(new Set(prompts.map((p) => p.seq)).size).toBe(20);
    await until(() => events.filter((e) => e.sessionId === view.id).length === stored.length);
    expect(seqs(events.filter((e) => e.sessionId === view.id))).toEqual(range(1, stored.length));
    // the CLI's lines keep their order
    const texts = stored
      .filter((r) => r.kind === "cli")
      .map((r) => (JSON.parse(r.payload) as { event: { delta: { text: string } } }).event.delta.text);
    expect(texts).toEqual(range(0, 199).map((i) => `t${i}`));
    await hub.close();
  });

  it("runs a prompt retried with the same commandId once, also while the first is in flight and after a restart", async () => {
    const { hub, factory } = makeHub({ promptDelayMs: 50 });
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    const id = commandId();
    const [a, b] = await Promise.all([hub.prompt(owner, view.id, "once", id), hub.prompt(owner, view.id, "once", id)]);
    const c = await hub.prompt(owner, view.id, "once", id);
    expect(a).toEqual(b);
    expect(c).toEqual(a);
    expect(factory.runners[0]!.prompts).toHaveLength(1);
    await hub.close();

    const second = makeHub();
    expect(await second.hub.prompt(owner, view.id, "once", id)).toEqual(a);
    expect(second.factory.runners).toHaveLength(0);
    const prompts = (await dbLog(view.id)).filter((r) => r.kind === "prompt");
    expect(prompts).toHaveLength(1);
    // a commandId used for another kind of command is refused
    await expect(second.hub.interrupt(owner, view.id, id)).rejects.toMatchObject({ code: "conflict" });
    await second.hub.close();
  });

  it("answers a retried prompt that no CLI took with its first error, also on another sidecar that finds it in the log", async () => {
    const refused = new AppError("conflict", "This session has ended and takes no more prompts: test");
    const { hub } = makeHub({ promptError: refused });
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    const id = commandId();
    const first = { code: "conflict", message: refused.message };
    await expect(hub.prompt(owner, view.id, "lost", id)).rejects.toMatchObject(first);
    await expect(hub.prompt(owner, view.id, "lost", id)).rejects.toMatchObject(first);
    await hub.close();
    // a sidecar without the first one's memory reads the prompt and its failure from the log
    const other = makeHub();
    await expect(other.hub.prompt(owner, view.id, "lost", id)).rejects.toMatchObject(first);
    expect(other.factory.runners).toHaveLength(0);
    // a prompt that did reach its CLI is still answered as accepted
    const fine = commandId();
    const accepted = await other.hub.prompt(owner, view.id, "kept", fine);
    await other.hub.close();
    const third = makeHub();
    expect(await third.hub.prompt(owner, view.id, "kept", fine)).toEqual(accepted);
    const log = await dbLog(view.id);
    expect(log.filter((r) => r.kind === "prompt")).toHaveLength(2);
    expect(log.filter((r) => r.kind === "process" && r.payload.includes('"command-failed"'))).toHaveLength(1);
    await third.hub.close();
  });

  it("serves the backlog after afterSeq, and the whole log flagged reset when the client is ahead", async () => {
    const { hub, factory } = makeHub({ onPrompt: (r, input) => emitTurn(r, input, "hi") });
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    await hub.prompt(owner, view.id, "hi", commandId());
    await until(async () => (await hub.view(view.id)).status === "idle" && (await dbLog(view.id)).length >= 6);
    const total = (await dbLog(view.id)).length;
    let snapshot: Parameters<Parameters<SessionHub["subscribe"]>[2]>[0] | undefined;
    await hub.subscribe(view.id, 2, (s) => (snapshot = s));
    expect(snapshot!.reset).toBe(false);
    expect(seqs(snapshot!.events)).toEqual(range(3, total));
    await hub.subscribe(view.id, total + 5, (s) => (snapshot = s));
    expect(snapshot!.reset).toBe(true);
    expect(seqs(snapshot!.events)).toEqual(range(1, total));
    expect(snapshot!.session.lastSeq).toBe(total);
    expect(factory.runners).toHaveLength(1);
    await hub.close();
  });

  it("loses and duplicates nothing between the snapshot and the live stream while events flow", async () => {
    const { hub, factory } = makeHub();
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    const runner = factory.runners[0]!;
    let streaming = true;
    const emitted = (async () => {
      let i = 0;
      while (streaming) {
        runner.emitLine({ type: "stream_event", event: { type: "ping", n: i++ }, session_id: "x" });
        await new Promise((r) => setImmediate(r));
      }
    })();
    const received: number[][] = [];
    await Promise.all(
      range(1, 25).map(async (i) => {
        await new Promise((r) => setTimeout(r, i * 3));
        const list: number[] = [];
        received.push(list);
        await hub.subscribe(view.id, Math.max(0, i * 2 - 10), (s) => {
          list.push(...seqs(s.events));
          // "joining the room": from now on, live events
          hub.onDidEmitEvent((e) => {
            if (e.sessionId === view.id) list.push(e.seq);
          });
        });
      }),
    );
    await new Promise((r) => setTimeout(r, 30));
    streaming = false;
    await emitted;
    await until(async () => (await hub.view(view.id)).lastSeq === (await dbLog(view.id)).length);
    const total = (await dbLog(view.id)).length;
    for (const list of received) {
      expect(list).toEqual(range(list[0]!, total));
    }
    await hub.close();
  });

  it("pages a long backlog: bounded replies, hasMore until the last page, which alone joins", async () => {
    const { hub, factory } = makeHub({}, { subscribePage: { maxEvents: 4, maxChars: 1_000_000_000 } });
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    for (let i = 0; i < 20; i++)
      factory.runners[0]!.emitLine({ type: "stream_event", event: { type: "ping", n: i }, session_id: "x" });
    await until(async () => (await hub.view(view.id)).lastSeq >= 22);
    const total = (await hub.view(view.id)).lastSeq;
    const pages: SubscribeSnapshot[] = [];
    let after = 0;
    for (;;) {
      let page: SubscribeSnapshot | undefined;
      await hub.subscribe(view.id, after, (s) => (page = s));
      pages.push(page!);
      expect(page!.events.length).toBeLessThanOrEqual(4);
      if (!page!.hasMore) break;
      after = page!.nextAfterSeq;
    }
    expect(pages.length).toBe(Math.ceil(total / 4));
    expect(pages.map((p) => p.reset)).toEqual(pages.map(() => false));
    expect(pages.flatMap((p) => seqs(p.events))).toEqual(range(1, total));
    expect(pages.at(-1)!.nextAfterSeq).toBe(total);

    // A client ahead of the server: the first page is flagged reset and starts at seq 1.
    let ahead: SubscribeSnapshot | undefined;
    await hub.subscribe(view.id, total + 10, (s) => (ahead = s));
    expect(ahead).toMatchObject({ reset: true, hasMore: true, nextAfterSeq: 4 });
    expect(seqs(ahead!.events)).toEqual([1, 2, 3, 4]);
    await hub.close();
  });

  it("cuts a page by payload size too, but always serves at least one event", async () => {
    const { hub, factory } = makeHub({}, { subscribePage: { maxEvents: 100, maxChars: 250_000 } });
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    const big = "y".repeat(300_000);
    for (let i = 0; i < 3; i++) {
      factory.runners[0]!.emitLine({ type: "stream_event", event: { type: "blob", text: big }, session_id: "x" });
      factory.runners[0]!.emitLine({ type: "stream_event", event: { type: "ping", n: i }, session_id: "x" });
    }
    await until(async () => (await hub.view(view.id)).lastSeq >= 8);
    const total = (await hub.view(view.id)).lastSeq;
    const sizes: number[] = [];
    const all: number[] = [];
    let after = 0;
    for (let guard = 0; guard < 20; guard++) {
      let page: SubscribeSnapshot | undefined;
      await hub.subscribe(view.id, after, (s) => (page = s));
      sizes.push(page!.events.length);
      all.push(...seqs(page!.events));
      // One 300 kB line alone passes the 250 kB budget: it comes alone (with what precedes it under the budget).
      const bigOnes = page!.events.filter((e) => e.trimmed);
      expect(bigOnes.length).toBeLessThanOrEqual(1);
      if (!page!.hasMore) break;
      after = page!.nextAfterSeq;
    }
    expect(all).toEqual(range(1, total));
    expect(sizes.length).toBeGreaterThanOrEqual(3);
    await hub.close();
  });

  it("a client paging while events flow ends with every event once, in order", async () => {
    const { hub, factory } = makeHub({}, { subscribePage: { maxEvents: 5, maxChars: 1_000_000_000 } });
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    const runner = factory.runners[0]!;
    for (let i = 0; i < 40; i++)
      runner.emitLine({ type: "stream_event", event: { type: "ping", n: i }, session_id: "x" });
    let streaming = true;
    const emitted = (async () => {
      let i = 0;
      while (streaming) {
        runner.emitLine({ type: "stream_event", event: { type: "live", n: i++ }, session_id: "x" });
        await new Promise((r) => setImmediate(r));
      }
    })();
    const lists = await Promise.all(
      range(1, 6).map(async (i) => {
        await new Promise((r) => setTimeout(r, i * 4));
        const list: number[] = [];
        let after = 0;
        for (;;) {
          let more = false;
          await hub.subscribe(view.id, after, (s) => {
            list.push(...seqs(s.events));
            more = s.hasMore;
            after = s.nextAfterSeq;
            // the last page joins the room in this same tick
            if (!s.hasMore) hub.onDidEmitEvent((e) => e.sessionId === view.id && list.push(e.seq));
          });
          if (!more) break;
        }
        return list;
      }),
    );
    await new Promise((r) => setTimeout(r, 30));
    streaming = false;
    await emitted;
    await until(async () => (await hub.view(view.id)).lastSeq === (await dbLog(view.id)).length);
    const total = (await dbLog(view.id)).length;
    for (const list of lists) expect(list).toEqual(range(1, total));
    await hub.close();
  });

  it("refuses to fetch an event larger than the cap, with a message that points to the download", async () => {
    const { hub, factory } = makeHub();
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    factory.runners[0]!.emitLine({
      type: "stream_event",
      event: { type: "huge", text: "z".repeat(maxFetchEventChars + 10) },
      session_id: "x",
    });
    await until(async () => (await dbLog(view.id)).some((r) => r.kind === "cli"));
    const seq = (await dbLog(view.id)).find((r) => r.kind === "cli")!.seq;
    await expect(hub.fetchEvent(view.id, seq)).rejects.toMatchObject({
      code: "invalid_payload",
      message: expect.stringContaining("Download the session's log"),
    });
    await hub.close();
  });

  it("sends large payloads trimmed and returns them whole on fetch", async () => {
    const { hub, factory, events } = makeHub();
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    const big = "x".repeat(1_000_000);
    factory.runners[0]!.emitLine({
      type: "user",
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: big }] },
      parent_tool_use_id: null,
      session_id: "s",
      tool_use_result: { stdout: big },
    });
    await until(() => events.some((e) => e.sessionId === view.id && e.kind === "cli"));
    const live = events.find((e) => e.sessionId === view.id && e.kind === "cli")!;
    expect(live.trimmed).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(live.payload))).toBeLessThanOrEqual(maxWirePayloadBytes);
    expect(live.payload).toMatchObject({
      type: "user",
      message: { content: [{ type: "tool_result", tool_use_id: "toolu_1" }] },
    });
    const whole = await hub.fetchEvent(view.id, live.seq);
    expect(whole.trimmed).toBe(false);
    expect((whole.payload as { tool_use_result: { stdout: string } }).tool_use_result.stdout).toBe(big);
    const stored = (await dbLog(view.id)).find((r) => r.seq === live.seq)!;
    expect(stored.payload.length).toBeGreaterThan(2_000_000);
    await expect(hub.fetchEvent(view.id, 9999)).rejects.toMatchObject({ code: "not_found" });
    await hub.close();
  });

  it("switches mode through the live CLI and remembers a refusal as the first outcome", async () => {
    const { hub, factory } = makeHub();
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    expect(await hub.setMode(owner, view.id, "plan", commandId(), false)).toMatchObject({ mode: "plan" });
    expect(factory.runners[0]!.modes).toEqual(["plan"]);
    expect((await hub.view(view.id)).mode).toBe("plan");
    await expect(hub.setMode(owner, view.id, "bypassPermissions", commandId(), false)).rejects.toMatchObject({
      code: "forbidden",
    });
    await hub.close();

    const refusing = makeHub({ modeError: new Error("mode refused by the CLI") });
    const other = await refusing.hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    const id = commandId();
    const first = await refusing.hub.setMode(owner, other.id, "acceptEdits", id, false).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(AppError);
    expect(first).toMatchObject({ code: "cli_error", message: "mode refused by the CLI" });
    await expect(refusing.hub.setMode(owner, other.id, "acceptEdits", id, false)).rejects.toMatchObject({
      code: "cli_error",
    });
    await refusing.hub.close();
    const after = makeHub();
    await expect(after.hub.setMode(owner, other.id, "acceptEdits", id, false)).rejects.toMatchObject({
      code: "cli_error",
      message: "mode refused by the CLI",
    });
    await after.hub.close();
  });

  it("stops, resumes on the next prompt, and after a sidecar restart starts a child with --resume", async () => {
    const { hub, factory } = makeHub({ onPrompt: (r, input) => emitTurn(r, input, "ok") });
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    await hub.prompt(owner, view.id, "first", commandId());
    await hub.stop(owner, view.id, commandId());
    const runner: FakeSessionRunner = factory.runners[0]!;
    expect(runner.stops).toBe(1);
    await until(async () => (await fx.db.session.findUnique({ where: { id: view.id } }))?.status === "stopped");
    expect((await hub.view(view.id)).status).toBe("stopped");
    // mode change while stopped: the runner keeps it for its next child
    expect(await hub.setMode(owner, view.id, "acceptEdits", commandId(), false)).toMatchObject({ mode: "acceptEdits" });
    expect(runner.modes).toEqual(["acceptEdits"]);
    await hub.prompt(owner, view.id, "second", commandId());
    expect(factory.runners).toHaveLength(1);
    expect(runner.prompts.map((p) => p.text)).toEqual(["first", "second"]);
    expect(runner.state.processRunning).toBe(true);
    await hub.close();
    expect(runner.disposed).toBe(true);
    expect((await fx.db.session.findUniqueOrThrow({ where: { id: view.id } })).status).toBe("stopped");

    const second = makeHub();
    expect((await second.hub.view(view.id)).tokens.input).toBe(20);
    await second.hub.prompt(owner, view.id, "third", commandId());
    expect(second.factory.runners[0]!.options).toMatchObject({
      resume: true,
      claudeSessionId: runner.options.claudeSessionId,
      permissionMode: "acceptEdits",
    });
    await second.hub.close();
  });

  it("writes a session row's changes together, and not at all when a burst ends where it began", async () => {
    const { hub } = makeHub({ onPrompt: (r, input) => emitTurn(r, input, "hi") });
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    const row = () => fx.db.session.findUniqueOrThrow({ where: { id: view.id } });
    await hub.prompt(owner, view.id, "first", commandId());
    // The first turn changes the model: written within the coalescing delay.
    await until(async () => (await row()).model === "claude-test" && (await row()).status === "idle");
    await new Promise((r) => setTimeout(r, 250));
    const before = await row();
    // running → idle within one tick: the row already says idle, so nothing is written.
    await hub.prompt(owner, view.id, "second", commandId());
    expect((await hub.view(view.id)).status).toBe("idle");
    await new Promise((r) => setTimeout(r, 300));
    const after = await row();
    expect(after.status).toBe("idle");
    // (updatedAt moves with the search text; lastActivityAt only with the live fields.)
    expect(after.lastActivityAt).toEqual(before.lastActivityAt);
    // A pid that goes away is written (the reaper trusts the rows).
    await hub.stop(owner, view.id, commandId());
    await until(async () => (await row()).pid === null && (await row()).status === "stopped");
    await hub.close();
  });

  it("logs each permission decision ahead of every line the answer causes", async () => {
    const { hub, factory, events } = makeHub();
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    const runner = factory.runners[0]!;
    const decision = await runner.decidePermission!({
      requestId: "req-1",
      request: { subtype: "can_use_tool", tool_name: "Bash", input: { command: "ls" }, tool_use_id: "toolu_9" },
      signal: new AbortController().signal,
    });
    expect(decision).toMatchObject({ behavior: "deny", message: expect.stringContaining("Bash") });
    // The CLI answers at once (the answer does not wait for the log): its next line comes after.
    runner.emitLine({ type: "system", subtype: "status", status: null, session_id: runner.options.claudeSessionId });
    await until(() => events.some((e) => e.sessionId === view.id && e.kind === "cli"));
    const logged = events.find((e) => e.sessionId === view.id && e.kind === "decision");
    expect(logged?.payload).toMatchObject({
      requestId: "req-1",
      toolName: "Bash",
      toolUseId: "toolu_9",
      behavior: "deny",
    });
    const next = events.find((e) => e.sessionId === view.id && e.kind === "cli");
    expect(logged!.seq).toBeLessThan(next!.seq);
    await hub.close();
  });

  it("offers bypassPermissions once the workspace allows it, through a new child after a stop", async () => {
    const { hub, factory } = makeHub();
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    expect(view.bypassAvailable).toBe(false);
    await expect(hub.setMode(owner, view.id, "bypassPermissions", commandId(), true)).rejects.toMatchObject({
      code: "conflict",
    });
    await hub.stop(owner, view.id, commandId());
    expect(await hub.setMode(owner, view.id, "bypassPermissions", commandId(), true)).toMatchObject({
      mode: "bypassPermissions",
    });
    expect(factory.runners[0]!.disposed).toBe(true);
    expect((await hub.view(view.id)).bypassAvailable).toBe(true);
    await hub.prompt(owner, view.id, "go", commandId());
    expect(factory.runners[1]!.options).toMatchObject({ allowBypass: true, permissionMode: "bypassPermissions" });
    await hub.close();
  });

  it("records a failed start and answers the create with its error", async () => {
    const { hub } = makeHub({
      startError: new AppError("unavailable", "Not enough free memory to start another CLI."),
    });
    const id = commandId();
    await expect(hub.createSession(owner, access(), { mode: "default", commandId: id })).rejects.toMatchObject({
      code: "unavailable",
    });
    const row = await fx.db.session.findFirstOrThrow({ orderBy: { createdAt: "desc" } });
    await until(async () => (await fx.db.session.findUniqueOrThrow({ where: { id: row.id } })).status === "stopped");
    const log = await dbLog(row.id);
    expect(log.map((r) => r.kind)).toEqual(["process", "process"]);
    expect(JSON.parse(log[1]!.payload)).toMatchObject({
      phase: "command-failed",
      command: "create",
      error: { code: "unavailable" },
    });
    await hub.close();
  });

  it("answers an unknown session with not_found", async () => {
    const { hub } = makeHub();
    await expect(hub.prompt(owner, "no-such-session", "x", commandId())).rejects.toMatchObject({ code: "not_found" });
    await expect(hub.subscribe("no-such-session", 0, () => undefined)).rejects.toMatchObject({ code: "not_found" });
    await hub.close();
  });
});

describe("SessionHub fair shares", () => {
  const editor = () => ({ id: fx.editor.id, name: fx.editor.name });
  const editorAccess = () => ({ workspace: fx.workspace, role: "editor" });

  it("refuses a prompt once the session's log is full, saying to start a new session", async () => {
    const { hub } = makeHub({}, { eventsMax: 3 });
    const view = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    await hub.prompt(owner, view.id, "first", commandId());
    await until(async () => (await hub.view(view.id)).lastSeq >= 3);
    const before = (await dbLog(view.id)).length;
    await expect(hub.prompt(owner, view.id, "second", commandId())).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringMatching(/^This session is full: its log holds \d+ events.*Start a new session/),
      details: { reason: "session_full", max: 3 },
    });
    // nothing was logged for the refused prompt, nothing dropped
    expect((await dbLog(view.id)).filter((e) => e.kind === "prompt")).toHaveLength(1);
    expect((await dbLog(view.id)).length).toBe(before);
    await hub.close();
  });

  it("reclaims a slot only from the same person's idle sessions, or one idle past the cull time", async () => {
    const { hub, factory } = makeHub({}, { idleCullMs: 60_000 });
    const ownersOld = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    const editors = await hub.createSession(editor(), editorAccess(), { mode: "default", commandId: commandId() });
    const ownersNew = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    expect(hub.slotOwner(ownersNew.id)).toEqual({ userId: owner.id, workspaceId: fx.workspace.id });
    const runnerOf = (id: string) => factory.runners.find((r) => r.sessionId === id)!;
    // the editor, at the server's cap: the owner's sessions rest between prompts, none may give way
    const editorsNew = await hub.createSession(editor(), editorAccess(), { mode: "default", commandId: commandId() });
    await hub.stop(editor(), editors.id, commandId());
    expect(await hub.reclaimIdleChild(editorsNew.id, "session_limit")).toBe(false);
    expect(runnerOf(ownersOld.id).stops).toBe(0);
    // the owner: one of their own goes, the one idle longest
    runnerOf(ownersOld.id).state = { ...runnerOf(ownersOld.id).state, lastActivityAt: Date.now() - 10_000 };
    expect(await hub.reclaimIdleChild(ownersNew.id, "user_limit")).toBe(true);
    expect(runnerOf(ownersOld.id).stops).toBe(1);
    await hub.close();
  });

  it("lets anyone's session idle past the cull time give way", async () => {
    const { hub, factory } = makeHub({}, { idleCullMs: 60_000 });
    const owners = await hub.createSession(owner, access(), { mode: "default", commandId: commandId() });
    const editors = await hub.createSession(editor(), editorAccess(), { mode: "default", commandId: commandId() });
    const runner = factory.runners.find((r) => r.sessionId === owners.id)!;
    runner.state = { ...runner.state, lastActivityAt: Date.now() - 61_000 };
    expect(await hub.reclaimIdleChild(editors.id, "session_limit")).toBe(true);
    expect(runner.stops).toBe(1);
    await hub.close();
  });
});
