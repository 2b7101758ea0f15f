/**
 * What the cluster looks like from the database, for `/api/health`: each sidecar node that has
 * not stopped cleanly nor been adopted, whether its heartbeat is recent enough to call it alive,
 * and how many unexpired session leases it holds. Read-only; the lease keeper writes these rows.
 */
import type { Db } from "./client";

/** One sidecar node as the health check shows it (no host, pid or address: the check is public). */
export interface ClusterNodeHealth {
  id: string;
  /** Heartbeat within the lease time. */
  alive: boolean;
  /** ISO time of its last heartbeat. */
  heartbeatAt: string;
  /** Live CLI sessions it reported at its last heartbeat. */
  liveSessions: number;
  /** Sessions it holds an unexpired lease on: what it owns now. */
  leases: number;
}

/** Most nodes listed (dead ones waiting for adoption included), newest heartbeat first. */
const maxNodes = 50;

/** The nodes (alive first, then the dead ones nobody adopted yet) and their unexpired leases. */
export async function readClusterHealth(db: Db, leaseMs: number, now: Date = new Date()): Promise<ClusterNodeHealth[]> {
  const [nodes, leases] = await Promise.all([
    db.sidecarNode.findMany({
      where: { stoppedAt: null, adoptedAt: null },
      orderBy: [{ heartbeatAt: "desc" }, { id: "asc" }],
      take: maxNodes,
      select: { id: true, heartbeatAt: true, liveSessions: true },
    }),
    db.sessionLease.groupBy({ by: ["ownerId"], where: { expiresAt: { gt: now } }, _count: { _all: true } }),
  ]);
  const owned = new Map(leases.map((row) => [row.ownerId, row._count._all]));
  const aliveSince = now.getTime() - leaseMs;
  return nodes
    .map((node) => ({
      id: node.id,
      alive: node.heartbeatAt.getTime() > aliveSince,
      heartbeatAt: node.heartbeatAt.toISOString(),
      liveSessions: node.liveSessions,
      leases: owned.get(node.id) ?? 0,
    }))
    .sort((a, b) => Number(b.alive) - Number(a.alive) || a.id.localeCompare(b.id));
}
