import { statSync } from "node:fs";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { insertSessionEvents } from "./session-events";
import { startWalCheckpointer, type CheckpointTiming } from "./wal-checkpointer";

let fx: SessionFixtures;
beforeAll(async () => {
  fx = await createSessionFixtures();
});
afterAll(async () => {
  await fx.close();
});

const autocheckpoint = async () =>
  Number(
    (await fx.db.$queryRawUnsafe<{ wal_autocheckpoint: bigint }[]>("PRAGMA wal_autocheckpoint"))[0]?.wal_autocheckpoint,
  );

describe("startWalCheckpointer", () => {
  it("takes checkpoints off the connection, keeps the WAL bounded under unbroken writing, and hands them back on close", async () => {
    const session = await fx.db.session.create({ data: { workspaceId: fx.workspace.id, createdById: fx.owner.id } });
    const checkpointer = await startWalCheckpointer(fx.db, fx.url, { intervalMs: 20, maxWalPages: 256 });
    expect(await autocheckpoint()).toBe(0);
    const payload = JSON.stringify({ text: "x".repeat(2000) });
    let seq = 0;
    let largest = 0;
    for (let batch = 0; batch < 300; batch++) {
      const rows = Array.from({ length: 10 }, () => ({
        sessionId: session.id,
        seq: ++seq,
        kind: "cli",
        payload,
        commandId: null,
        userId: null,
        createdAt: new Date(),
      }));
      await insertSessionEvents(fx.db, rows);
      largest = Math.max(largest, statSync(`${fx.url.slice("file:".length)}-wal`).size);
      if (batch % 20 === 0) await new Promise((r) => setTimeout(r, 25));
    }
    // ~6 MB written; the WAL stayed within a few times the 1 MB limit
    expect(largest).toBeLessThan(4 * 1024 * 1024);
    await checkpointer.close();
    expect(await autocheckpoint()).toBe(1000);
    expect(await fx.db.sessionEvent.count({ where: { sessionId: session.id } })).toBe(3000);
  }, 30_000);

  it("never waits for a reader: a RESTART a long read blocks answers busy, and writes go on", async () => {
    const session = await fx.db.session.create({ data: { workspaceId: fx.workspace.id, createdById: fx.owner.id } });
    const timings: CheckpointTiming[] = [];
    const checkpointer = await startWalCheckpointer(fx.db, fx.url, { intervalMs: 20, maxWalPages: 64, onCheckpoint: (t) => timings.push(t) });
    // another connection (the web app's long report) holds a read snapshot throughout
    const reader = new Database(fx.url.slice("file:".length), { readonly: true });
    reader.exec("BEGIN");
    reader.prepare('SELECT COUNT(*) FROM "SessionEvent"').get();
    const payload = JSON.stringify({ text: "y".repeat(2000) });
    let seq = 0;
    try {
      for (let batch = 0; batch < 60; batch++) {
        await insertSessionEvents(fx.db, Array.from({ length: 10 }, () => ({ sessionId: session.id, seq: ++seq, kind: "cli", payload, commandId: null, userId: null, createdAt: new Date() })));
        await new Promise((r) => setTimeout(r, 10));
      }
      await new Promise((r) => setTimeout(r, 100));
      // past the limit, RESTARTs were tried and each gave up at once instead of holding the write lock
      const restarts = timings.filter((t) => t.mode === "RESTART");
      expect(restarts.length).toBeGreaterThan(0);
      expect(restarts.every((t) => t.busy)).toBe(true);
    } finally {
      reader.exec("COMMIT");
      reader.close();
    }
    expect(await fx.db.sessionEvent.count({ where: { sessionId: session.id } })).toBe(600);
    // the reader gone, the next RESTART succeeds
    const before = timings.length;
    await insertSessionEvents(fx.db, [{ sessionId: session.id, seq: ++seq, kind: "cli", payload, commandId: null, userId: null, createdAt: new Date() }]);
    await new Promise((r) => setTimeout(r, 200));
    expect(timings.slice(before).some((t) => t.mode === "RESTART" && !t.busy) || timings.slice(before).every((t) => t.walPages <= 64)).toBe(true);
    await checkpointer.close();
  }, 30_000);

  it("does nothing for PostgreSQL", async () => {
    const checkpointer = await startWalCheckpointer(fx.db, "postgresql://user@localhost/db");
    await checkpointer.close();
    expect(await autocheckpoint()).toBe(1000);
  });
});
