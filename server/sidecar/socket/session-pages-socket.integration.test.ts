// A long session's log read tail first: the first subscribe from tailAfterSeq, then earlier
// pages with session:events-before until the log's start. Every seq arrives exactly once, a
// payload over the wire limit comes trimmed, members read, non-members learn nothing.
import pino from "pino";
import type { Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertSessionEvents, listSessionEventPageBefore, type SessionEventRecord } from "@/server/db/session-events";
import type { Ack } from "@/server/shared/wire/ack";
import { maxWirePayloadBytes, type SubscribeResult } from "@/server/shared/wire/session";
import { tailAfterSeq, tailEvents, type EventsBeforeResult } from "@/server/shared/wire/session-pages";
import { fakeRunnerFactory } from "@/test/fake-session-runner";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { startTestSidecar, type TestSidecar } from "@/test/sidecar-fixture";

const log = pino({ level: "silent" });
const total = 1_234;

describe("session pages", () => {
  let fx: SessionFixtures;
  let sidecar: TestSidecar;
  let sessionId: string;
  const sockets = new Map<string, Socket>();

  beforeAll(async () => {
    fx = await createSessionFixtures();
    sidecar = await startTestSidecar(fx, { createRunner: fakeRunnerFactory().create, log });
    const session = await fx.db.session.create({
      data: { workspaceId: fx.workspace.id, createdById: fx.owner.id, status: "stopped" },
    });
    sessionId = session.id;
    const at = new Date("2026-12-01T10:00:00.000Z");
    const rows: SessionEventRecord[] = Array.from({ length: total }, (_, i) => {
      const seq = i + 1;
      if (seq % 100 === 1)
        return { sessionId, seq, kind: "prompt", payload: JSON.stringify({ text: `prompt ${seq}` }), commandId: `cmd-${seq}-padding`, userId: fx.editor.id, createdAt: at };
      const text = seq === 77 ? "x".repeat(maxWirePayloadBytes * 2) : `reply ${seq}`;
      return { sessionId, seq, kind: "cli", payload: JSON.stringify({ type: "assistant", message: { id: `m${seq}`, content: [{ type: "text", text }] } }), commandId: null, userId: null, createdAt: at };
    });
    await insertSessionEvents(fx.db, rows);
    for (const who of ["owner", "viewer", "outsider"] as const) sockets.set(who, await sidecar.connect(fx[who]));
  });

  afterAll(async () => {
    await sidecar?.close();
    await fx?.close();
  });

  const ask = <T>(who: string, event: string, payload: unknown) =>
    sockets.get(who)!.timeout(10_000).emitWithAck(event, payload) as Promise<Ack<T>>;

  it("reads the tail first, then every earlier page down to seq 1, each seq once", async () => {
    const tail = await ask<SubscribeResult>("viewer", "session:subscribe", { sessionId, afterSeq: tailAfterSeq(total) });
    if (!tail.ok) throw new Error(tail.error.message);
    expect(tail.data).toMatchObject({ reset: false, hasMore: false });
    expect(tail.data.events.map((e) => e.seq)).toEqual(Array.from({ length: tailEvents }, (_, i) => total - tailEvents + 1 + i));

    const seqs = tail.data.events.map((e) => e.seq);
    let before = seqs[0]!;
    let pages = 0;
    while (before > 1) {
      const page = await ask<EventsBeforeResult>("viewer", "session:events-before", { sessionId, beforeSeq: before });
      if (!page.ok) throw new Error(page.error.message);
      pages += 1;
      // the page covers (fromSeq, before) without a hole
      expect(page.data.events.map((e) => e.seq)).toEqual(
        Array.from({ length: before - 1 - page.data.fromSeq }, (_, i) => page.data.fromSeq + 1 + i),
      );
      seqs.unshift(...page.data.events.map((e) => e.seq));
      before = page.data.fromSeq + 1;
      if (page.data.fromSeq === 0) break;
    }
    expect(pages).toBe(3); // 1,034 earlier events in pages of at most 500
    expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  });

  it("names the senders and trims what is too large for the wire", async () => {
    const page = await ask<EventsBeforeResult>("owner", "session:events-before", { sessionId, beforeSeq: 102 });
    if (!page.ok) throw new Error(page.error.message);
    expect(page.data.fromSeq).toBe(0);
    const prompt = page.data.events.find((e) => e.seq === 101)!;
    expect(prompt).toMatchObject({ kind: "prompt", payload: { text: "prompt 101" }, user: { id: fx.editor.id, name: "Ed" } });
    const big = page.data.events.find((e) => e.seq === 77)!;
    expect(big.trimmed).toBe(true);
    expect(JSON.stringify(big.payload).length).toBeLessThanOrEqual(maxWirePayloadBytes);
    expect(page.data.events.find((e) => e.seq === 76)!.trimmed).toBe(false);
  });

  it("an empty page before seq 1; non-members get not_found like a missing session; bad payloads are refused", async () => {
    expect(await ask("viewer", "session:events-before", { sessionId, beforeSeq: 1 })).toEqual({ ok: true, data: { events: [], fromSeq: 0 } });
    const outsider = await ask("outsider", "session:events-before", { sessionId, beforeSeq: 50 });
    const missing = await ask("outsider", "session:events-before", { sessionId: "c0000000000000000000nope", beforeSeq: 50 });
    expect(outsider).toMatchObject({ ok: false, error: { code: "not_found" } });
    expect(missing).toEqual(outsider);
    expect(await ask("viewer", "session:events-before", { sessionId, beforeSeq: 0 })).toMatchObject({ ok: false, error: { code: "invalid_payload" } });
    expect(await ask("viewer", "session:events-before", { sessionId })).toMatchObject({ ok: false, error: { code: "invalid_payload" } });
  });

  it("a page stops at its size limit but always holds one row", async () => {
    const bySize = await listSessionEventPageBefore(fx.db, sessionId, 80, { maxEvents: 100, maxChars: 10 });
    expect(bySize.rows.map((r) => r.seq)).toEqual([79]);
    expect(bySize.more).toBe(true);
    const big = await listSessionEventPageBefore(fx.db, sessionId, 78, { maxEvents: 100, maxChars: 1_000 });
    expect(big.rows.map((r) => r.seq)).toEqual([77]);
    const start = await listSessionEventPageBefore(fx.db, sessionId, 4, { maxEvents: 100, maxChars: 1_000_000 });
    expect(start).toMatchObject({ more: false });
    expect(start.rows.map((r) => r.seq)).toEqual([1, 2, 3]);
  });
});
