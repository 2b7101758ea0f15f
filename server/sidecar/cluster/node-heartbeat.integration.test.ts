// The node heartbeat on a real database: its row at start, a twin refused, beats with memory
// and live sessions, its tasks after each beat, a failed write survived, a clean stop.
import pino from "pino";
import { expect, it } from "vitest";
import type { Db } from "@/server/db/client";
import { findSidecarNode } from "@/server/db/sidecar-nodes";
import { itOnBothProviders } from "@/server/db/test-support";
import { DuplicateSidecarId, freeMemoryMb, NodeHeartbeat } from "./node-heartbeat";

const log = pino({ level: "silent" });

function heartbeat(db: Db, clock: { t: number }, over: Partial<ConstructorParameters<typeof NodeHeartbeat>[0]> = {}): NodeHeartbeat {
  return new NodeHeartbeat({
    db,
    selfId: "node-a",
    url: null,
    liveSessions: () => 3,
    log,
    host: "host-1",
    pid: 100,
    leaseMs: 6_000,
    heartbeatMs: 60_000,
    now: () => clock.t,
    freeMb: () => 1234,
    pidRunning: () => true,
    ...over,
  });
}

itOnBothProviders("node heartbeat", "registers, beats, refuses a twin, stops cleanly", async (db) => {
  const clock = { t: Date.parse("2026-12-01T10:00:00Z") };
  const a = heartbeat(db, clock);
  await a.register();
  const ran: string[] = [];
  a.afterBeat("first", async () => void ran.push("first"));
  a.afterBeat("broken", () => Promise.reject(new Error("task failed")));
  a.afterBeat("second", async () => void ran.push("second"));
  await a.start("http://127.0.0.1:4001");
  expect(ran).toEqual(["first", "second"]); // a failing task stops neither the beat nor the next task
  expect(await db.sidecarNode.findUnique({ where: { id: "node-a" } })).toMatchObject({
    host: "host-1",
    pid: 100,
    url: "http://127.0.0.1:4001",
    freeMb: 1234,
    liveSessions: 3,
    stoppedAt: null,
  });

  // another process (another pid, or another host) with the same id, while a beats: refused
  clock.t += 2_000;
  await a.beat();
  await expect(heartbeat(db, clock, { pid: 200 }).register()).rejects.toThrow(DuplicateSidecarId);
  await expect(heartbeat(db, clock, { host: "host-2" }).register()).rejects.toThrow(/CONDUIT_SIDECAR_ID/);
  // the same host, but the other pid is gone (a crash, restarted at once): allowed
  const restarted = heartbeat(db, clock, { pid: 300, pidRunning: (pid) => pid !== 100 });
  await restarted.register();
  expect((await findSidecarNode(db, "node-a"))?.pid).toBe(300);
  // the old process's beat no longer counts (the row is the new one's)
  const before = (await findSidecarNode(db, "node-a"))?.heartbeatAt.getTime();
  clock.t += 2_000;
  await a.beat();
  expect((await findSidecarNode(db, "node-a"))?.heartbeatAt.getTime()).toBe(before);
  await a.pause();

  // a clean stop marks the row; a later start with another pid is then welcome
  await restarted.stop();
  expect((await findSidecarNode(db, "node-a"))?.stoppedAt).not.toBeNull();
  await heartbeat(db, clock, { pid: 400, host: "host-2" }).register();
  expect(await findSidecarNode(db, "node-a")).toMatchObject({ pid: 400, host: "host-2", stoppedAt: null });

  // a stale heartbeat (older than the lease time) is no rival either
  clock.t += 6_001;
  await heartbeat(db, clock, { pid: 500 }).register();
});

itOnBothProviders("node heartbeat", "a failed heartbeat write is logged, never thrown", async (db) => {
  const clock = { t: Date.parse("2026-12-01T10:00:00Z") };
  const errors: string[] = [];
  const a = heartbeat(db, clock, {
    log: { info: () => undefined, warn: () => undefined, error: (_fields: unknown, message?: string) => void errors.push(String(message)) } as never,
    liveSessions: () => {
      throw new Error("boom");
    },
  });
  await a.register();
  await a.beat();
  expect(errors).toContain("sidecar heartbeat write failed");
});

it("reads free memory from MemAvailable", () => {
  expect(freeMemoryMb(() => "MemTotal: 8000000 kB\nMemAvailable:    2097152 kB\n")).toBe(2048);
  expect(freeMemoryMb(() => "nothing here")).toBeGreaterThan(0);
});
