/**
 * Who is in the cluster and who runs which session, as the rest of the sidecar asks it. The
 * answers come from the database: `SidecarNode` heartbeats and `SessionLease` rows (written by
 * the lease keeper, `session-leases.ts`). One sidecar alone is a cluster of one: the same code,
 * and every answer is "here" or "nobody".
 *
 * Owns: the reads and the timings every node agrees on. Must not: write leases or heartbeats.
 */
import type { Db } from "@/server/db/client";

/** The timings of the cluster; every node must use the same. */
export const clusterTimings = {
  /** How often a node writes its heartbeat and renews its leases. */
  heartbeatMs: 2_000,
  /** How long a lease holds without renewal; a node whose heartbeat is older is dead. */
  leaseMs: 6_000,
} as const;

/** A live node as the directory reports it (plain JSON). */
export interface SidecarNodeView {
  id: string;
  host: string;
  url: string | null;
  /** ISO time of its last heartbeat. */
  heartbeatAt: string;
  freeMb: number;
  liveSessions: number;
}

/** The questions the sidecar asks about the cluster. */
export interface ClusterDirectory {
  /** This sidecar's id. */
  readonly selfId: string;
  /** The sidecar holding an unexpired lease on the session, or null when no sidecar runs it. */
  ownerOf(sessionId: string): Promise<string | null>;
  /** The session's lease as stored (its owner, and when it runs out unless renewed), or null. */
  leaseOf?(sessionId: string): Promise<{ ownerId: string; expiresAt: number } | null>;
  /** The live nodes (heartbeat within the lease time, not stopped), this one included once it has beaten. */
  liveNodes(): Promise<SidecarNodeView[]>;
  /** Where a new session should start: the live node with the most free memory (this one when alone). */
  pickNodeForNewSession(): Promise<string>;
}

/** The node with the most free memory; this one on a tie or when no node is listed. Pure. */
export function pickNode(nodes: readonly SidecarNodeView[], selfId: string): string {
  let best: SidecarNodeView | undefined;
  for (const node of nodes) {
    if (best === undefined || node.freeMb > best.freeMb || (node.freeMb === best.freeMb && node.id === selfId)) best = node;
  }
  return best?.id ?? selfId;
}

/** The directory on the database. */
export function createDbClusterDirectory(db: Db, selfId: string, now: () => Date = () => new Date()): ClusterDirectory {
  const liveNodes = async (): Promise<SidecarNodeView[]> => {
    const since = new Date(now().getTime() - clusterTimings.leaseMs);
    const rows = await db.sidecarNode.findMany({
      where: { heartbeatAt: { gt: since }, stoppedAt: null },
      orderBy: { id: "asc" },
    });
    return rows.map((row) => ({
      id: row.id,
      host: row.host,
      url: row.url,
      heartbeatAt: row.heartbeatAt.toISOString(),
      freeMb: row.freeMb,
      liveSessions: row.liveSessions,
    }));
  };
  return {
    selfId,
    async ownerOf(sessionId) {
      const lease = await db.sessionLease.findUnique({ where: { sessionId }, select: { ownerId: true, expiresAt: true } });
      return lease !== null && lease.expiresAt.getTime() > now().getTime() ? lease.ownerId : null;
    },
    async leaseOf(sessionId) {
      const lease = await db.sessionLease.findUnique({ where: { sessionId }, select: { ownerId: true, expiresAt: true } });
      return lease === null ? null : { ownerId: lease.ownerId, expiresAt: lease.expiresAt.getTime() };
    },
    liveNodes,
    async pickNodeForNewSession() {
      return pickNode(await liveNodes(), selfId);
    },
  };
}
