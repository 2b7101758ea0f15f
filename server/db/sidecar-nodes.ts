/**
 * The `SidecarNode` rows: one per sidecar of the cluster, written by its heartbeat
 * (server/sidecar/cluster/node-heartbeat.ts) and claimed, once it is dead, by the peer that
 * adopts its sessions (server/sidecar/cluster/adoption.ts). Every change of who adopts is a
 * conditional write, so exactly one live node adopts a dead one.
 */
import type { Db } from "./client";

/** A node row as the heartbeat and adoption read it. */
export interface SidecarNodeRow {
  id: string;
  host: string;
  pid: number;
  url: string | null;
  startedAt: Date;
  heartbeatAt: Date;
  stoppedAt: Date | null;
  adoptedById: string | null;
}

const columns = { id: true, host: true, pid: true, url: true, startedAt: true, heartbeatAt: true, stoppedAt: true, adoptedById: true } as const;

export function findSidecarNode(db: Db, id: string): Promise<SidecarNodeRow | null> {
  return db.sidecarNode.findUnique({ where: { id }, select: columns });
}

/** Writes this node's row at start: a fresh start, not stopped, nobody's adoptee. */
export async function upsertSidecarNode(
  db: Db,
  node: { id: string; host: string; pid: number; url: string | null; now: Date },
): Promise<void> {
  const fields = {
    host: node.host,
    pid: node.pid,
    url: node.url,
    startedAt: node.now,
    heartbeatAt: node.now,
    stoppedAt: null,
    adoptedById: null,
    adoptedAt: null,
  };
  await db.sidecarNode.upsert({ where: { id: node.id }, create: { id: node.id, ...fields }, update: fields, select: { id: true } });
}

/** One heartbeat of a running node. Returns false when the row is gone or belongs to another pid. */
export async function beatSidecarNode(
  db: Db,
  beat: { id: string; host: string; pid: number; now: Date; freeMb: number; liveSessions: number },
): Promise<boolean> {
  const { count } = await db.sidecarNode.updateMany({
    where: { id: beat.id, host: beat.host, pid: beat.pid },
    data: { heartbeatAt: beat.now, freeMb: beat.freeMb, liveSessions: beat.liveSessions },
  });
  return count === 1;
}

/** Where the node listens, once it does. */
export async function setSidecarNodeUrl(db: Db, node: { id: string; host: string; pid: number; url: string }): Promise<void> {
  await db.sidecarNode.updateMany({ where: { id: node.id, host: node.host, pid: node.pid }, data: { url: node.url } });
}

/** A clean stop: nothing is left to adopt. */
export async function markSidecarStopped(db: Db, node: { id: string; host: string; pid: number; now: Date }): Promise<void> {
  await db.sidecarNode.updateMany({ where: { id: node.id, host: node.host, pid: node.pid }, data: { stoppedAt: node.now } });
}

/** Nodes whose heartbeat is older than `deadBefore`, not stopped cleanly, not adopted yet. */
export function listDeadSidecarNodes(db: Db, deadBefore: Date, exceptId: string): Promise<SidecarNodeRow[]> {
  return db.sidecarNode.findMany({
    where: { heartbeatAt: { lt: deadBefore }, stoppedAt: null, adoptedById: null, id: { not: exceptId } },
    orderBy: { heartbeatAt: "asc" },
    select: columns,
  });
}

/**
 * Claims the adoption of a dead node: one conditional UPDATE, so of several live nodes trying at
 * once exactly one gets it. False when it beat again, stopped, or another node adopted it first.
 */
export async function claimDeadSidecarNode(
  db: Db,
  claim: { deadId: string; adopterId: string; deadBefore: Date; now: Date },
): Promise<boolean> {
  const { count } = await db.sidecarNode.updateMany({
    where: { id: claim.deadId, heartbeatAt: { lt: claim.deadBefore }, stoppedAt: null, adoptedById: null },
    data: { adoptedById: claim.adopterId, adoptedAt: claim.now },
  });
  return count === 1;
}

/**
 * Sidecar ids named by sessions (their `sidecarId`, or a lease's owner) with no `SidecarNode`
 * row: rows of releases before node rows existed (the id was the host name), or of a node whose
 * row was removed. Adopted like a dead node, once.
 */
export async function listUnknownSidecarIds(db: Db): Promise<string[]> {
  const [sessions, leases, nodes] = await Promise.all([
    db.session.findMany({ where: { sidecarId: { not: null } }, distinct: ["sidecarId"], select: { sidecarId: true } }),
    db.sessionLease.findMany({ distinct: ["ownerId"], select: { ownerId: true } }),
    db.sidecarNode.findMany({ select: { id: true } }),
  ]);
  const known = new Set(nodes.map((n) => n.id));
  const ids = new Set<string>();
  for (const s of sessions) if (s.sidecarId !== null && !known.has(s.sidecarId)) ids.add(s.sidecarId);
  for (const l of leases) if (!known.has(l.ownerId)) ids.add(l.ownerId);
  return [...ids].sort();
}

/**
 * Claims an id without a node row by inserting its row, already adopted by `adopterId` (the
 * primary key decides between nodes trying at once). `host` is where its children ran, if known.
 * False when the row exists (another node adopted it, or it started).
 */
export async function claimUnknownSidecarId(
  db: Db,
  claim: { deadId: string; host: string; adopterId: string; now: Date },
): Promise<boolean> {
  const epoch = new Date(0);
  try {
    await db.sidecarNode.create({
      data: {
        id: claim.deadId,
        host: claim.host,
        pid: 0,
        url: null,
        startedAt: epoch,
        heartbeatAt: epoch,
        adoptedById: claim.adopterId,
        adoptedAt: claim.now,
      },
      select: { id: true },
    });
    return true;
  } catch (err) {
    if (isUniqueConflict(err)) return false;
    throw err;
  }
}

export function isUniqueConflict(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: string }).code === "P2002";
}
