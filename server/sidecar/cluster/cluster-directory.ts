/**
 * Who is in the cluster and who runs which session, as the rest of the sidecar asks it. The
 * answers come from the database: `SidecarNode` heartbeats and `SessionLease` rows (written by
 * the lease keeper, `session-leases.ts`). One sidecar alone is a cluster of one: the same code,
 * and every answer is "here" or "nobody".
 *
 * Owns: the reads and the timings every node agrees on. Must not: write leases or heartbeats.
 */
import type { Db } from "@/server/db/client";
import { findSessionLease } from "@/server/db/session-leases";

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
  /**
   * Where a new session should start (`pickNode`: the host with the most free memory, its node
   * with the fewest sessions; this one when alone), remembered as pending there until that node's
   * next heartbeat reports it.
   */
  pickNodeForNewSession(): Promise<string>;
}

/** What one more CLI session is expected to take (each CLI process holds about 200 MB). */
export const approxSessionMb = 200;

/**
 * Where a new session should start. Pure.
 *
 * - The host with the most free memory, less what the sessions placed there since its last
 *   heartbeat will take (`pending`, sessions this node sent it that no beat reports yet): a
 *   burst of creations between two beats does not all land on the node that led at the last one.
 * - Nodes of one host share its memory (they report the same `MemAvailable`), so among them the
 *   one with the fewest sessions (live, plus pending).
 * - Then this node, then the lowest id. No node listed yet: this one.
 */
export function pickNode(nodes: readonly SidecarNodeView[], selfId: string, pending: ReadonlyMap<string, number> = new Map()): string {
  const pendingOf = (node: SidecarNodeView) => pending.get(node.id) ?? 0;
  const hosts = new Map<string, { freeMb: number; beatAt: string; pending: number }>();
  for (const node of nodes) {
    const host = hosts.get(node.host);
    if (host === undefined) hosts.set(node.host, { freeMb: node.freeMb, beatAt: node.heartbeatAt, pending: pendingOf(node) });
    else {
      // the host's memory as its latest beat saw it
      if (node.heartbeatAt > host.beatAt) Object.assign(host, { freeMb: node.freeMb, beatAt: node.heartbeatAt });
      host.pending += pendingOf(node);
    }
  }
  const headroom = (node: SidecarNodeView) => {
    const host = hosts.get(node.host)!;
    return host.freeMb - approxSessionMb * host.pending;
  };
  const load = (node: SidecarNodeView) => node.liveSessions + pendingOf(node);
  let best: SidecarNodeView | undefined;
  for (const node of nodes) {
    if (best === undefined) {
      best = node;
      continue;
    }
    const order =
      headroom(node) - headroom(best) || load(best) - load(node) || Number(node.id === selfId) - Number(best.id === selfId) || (node.id < best.id ? 1 : 0);
    if (order > 0) best = node;
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
  let placed: { nodeId: string; at: number }[] = [];
  return {
    selfId,
    async ownerOf(sessionId) {
      const lease = await findSessionLease(db, sessionId);
      return lease !== null && lease.expiresAt.getTime() > now().getTime() ? lease.ownerId : null;
    },
    async leaseOf(sessionId) {
      const lease = await findSessionLease(db, sessionId);
      return lease === null ? null : { ownerId: lease.ownerId, expiresAt: lease.expiresAt.getTime() };
    },
    liveNodes,
    async pickNodeForNewSession() {
      const nodes = await liveNodes();
      const at = now().getTime();
      // placements a node's beat has not reported yet (its beat after the placement counts the session)
      const beatOf = new Map(nodes.map((n) => [n.id, Date.parse(n.heartbeatAt)]));
      const pending = new Map<string, number>();
      placed = placed.filter((p) => p.at > (beatOf.get(p.nodeId) ?? at - clusterTimings.leaseMs));
      for (const p of placed) pending.set(p.nodeId, (pending.get(p.nodeId) ?? 0) + 1);
      const target = pickNode(nodes, selfId, pending);
      placed.push({ nodeId: target, at });
      return target;
    },
  };
}
