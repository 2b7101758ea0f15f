// /api/health's cluster part: which sidecar nodes are alive (heartbeat within the lease time) and
// how many unexpired leases each holds, read from the database on both providers.
import { expect, it } from "vitest";
import { itOnBothProviders } from "@/server/db/test-support";
import { clusterTimings } from "@/server/sidecar/cluster/cluster-directory";
import { clusterHealth, clusterLeaseMs } from "@/server/web/sidecar-health";

it("uses the sidecar's lease time (the web app keeps its own copy: it may not import the sidecar)", () => {
  expect(clusterLeaseMs).toBe(clusterTimings.leaseMs);
});

itOnBothProviders("cluster health", "lists live and dead nodes with the leases they hold", async (db) => {
  const now = new Date("2026-12-01T12:00:00.000Z");
  const ago = (ms: number) => new Date(now.getTime() - ms);
  const later = (ms: number) => new Date(now.getTime() + ms);
  const node = (id: string, heartbeatAt: Date, extra: { stoppedAt?: Date; adoptedAt?: Date; liveSessions?: number } = {}) =>
    db.sidecarNode.create({
      data: { id, host: "h", pid: 1, startedAt: ago(60_000), heartbeatAt, liveSessions: extra.liveSessions ?? 0, ...extra },
    });
  await node("sc-a", ago(1_000), { liveSessions: 2 });
  await node("sc-b", ago(5_000));
  await node("sc-dead", ago(clusterLeaseMs + 1_000), { liveSessions: 4 });
  await node("sc-stopped", ago(500), { stoppedAt: ago(100) });
  await node("sc-adopted", ago(60_000), { adoptedAt: ago(30_000) });
  await db.sessionLease.createMany({
    data: [
      { sessionId: "s1", ownerId: "sc-a", expiresAt: later(3_000) },
      { sessionId: "s2", ownerId: "sc-a", expiresAt: later(1) },
      { sessionId: "s3", ownerId: "sc-a", expiresAt: ago(1) },
      { sessionId: "s4", ownerId: "sc-b", expiresAt: later(6_000) },
      { sessionId: "s5", ownerId: "sc-dead", expiresAt: ago(1_000) },
    ],
  });
  const health = await clusterHealth(db, now);
  expect(health).toEqual({
    leaseMs: clusterLeaseMs,
    alive: 2,
    nodes: [
      { id: "sc-a", alive: true, heartbeatAt: ago(1_000).toISOString(), liveSessions: 2, leases: 2 },
      { id: "sc-b", alive: true, heartbeatAt: ago(5_000).toISOString(), liveSessions: 0, leases: 1 },
      { id: "sc-dead", alive: false, heartbeatAt: ago(clusterLeaseMs + 1_000).toISOString(), liveSessions: 4, leases: 0 },
    ],
  });
});
