/**
 * The `SessionLease` rows: who runs a live session's CLI, one owner at a time. Every write is
 * conditional (an insert the primary key decides, or an UPDATE whose WHERE names the owner or an
 * expired lease), so two sidecars can never both believe they hold a session. The same
 * statements on SQLite and PostgreSQL. The lease keeper (server/sidecar/cluster/session-leases.ts)
 * is their one writer, besides adoption deleting a dead node's leases; the cluster directory reads
 * who holds a lease.
 */
import { Prisma } from "@/generated/prisma/client";
import type { Db } from "./client";
import { hotPath, hotRows } from "./hot-statements";
import { isUniqueConflict } from "./sidecar-nodes";

export interface SessionLeaseRow {
  sessionId: string;
  ownerId: string;
  generation: number;
  expiresAt: Date;
}

const columns = { sessionId: true, ownerId: true, generation: true, expiresAt: true } as const;

/**
 * A session's lease (null: nobody ever held it, or it was released). Every command that reaches a
 * node not holding the lease reads it to find the owner: on PostgreSQL a named statement
 * (hot-statements.ts).
 */
export async function findSessionLease(db: Db, sessionId: string): Promise<SessionLeaseRow | null> {
  if (!hotPath(db)) return db.sessionLease.findUnique({ where: { sessionId }, select: columns });
  const [row] = await hotRows<SessionLeaseRow>(
    db,
    Prisma.sql`SELECT "sessionId", "ownerId", "generation", "expiresAt" FROM "SessionLease" WHERE "sessionId" = ${sessionId}`,
  );
  return row ?? null;
}

/**
 * Claims a session's lease for `ownerId`: inserted when there is no row, else taken over when it
 * is ours already or expired (generation + 1). Returns the lease now held, or the row of the
 * owner that holds it (`claimed: false`).
 */
export async function claimSessionLease(
  db: Db,
  claim: { sessionId: string; ownerId: string; now: Date; expiresAt: Date },
  /** `takeOwn: false`: an unexpired lease of `ownerId` itself is not taken either (an adopter must not take its own hub's). */
  options: { takeOwn?: boolean } = {},
): Promise<{ claimed: true; lease: SessionLeaseRow } | { claimed: false; holder: SessionLeaseRow | null }> {
  try {
    const lease = await db.sessionLease.create({
      data: { sessionId: claim.sessionId, ownerId: claim.ownerId, generation: 1, expiresAt: claim.expiresAt, updatedAt: claim.now },
      select: columns,
    });
    return { claimed: true, lease };
  } catch (err) {
    if (!isUniqueConflict(err)) throw err;
  }
  const taken = await db.sessionLease.updateManyAndReturn({
    where:
      options.takeOwn === false
        ? { sessionId: claim.sessionId, expiresAt: { lt: claim.now } }
        : { sessionId: claim.sessionId, OR: [{ ownerId: claim.ownerId }, { expiresAt: { lt: claim.now } }] },
    data: { ownerId: claim.ownerId, generation: { increment: 1 }, expiresAt: claim.expiresAt, updatedAt: claim.now },
    select: columns,
  });
  const lease = taken[0];
  if (lease !== undefined) return { claimed: true, lease };
  return { claimed: false, holder: await findSessionLease(db, claim.sessionId) };
}

/**
 * Renews the leases `ownerId` holds on `sessionIds` in one statement and answers the rows it
 * renewed (a lease taken by another node, or deleted by an adopter, is not among them).
 */
export async function renewSessionLeases(
  db: Db,
  renewal: { ownerId: string; sessionIds: readonly string[]; now: Date; expiresAt: Date },
): Promise<SessionLeaseRow[]> {
  if (renewal.sessionIds.length === 0) return [];
  return db.sessionLease.updateManyAndReturn({
    where: { ownerId: renewal.ownerId, sessionId: { in: [...renewal.sessionIds] } },
    data: { expiresAt: renewal.expiresAt, updatedAt: renewal.now },
    select: columns,
  });
}

/** Gives a lease up: only the holder's own generation is deleted (a newer owner's stays). */
export async function releaseSessionLease(db: Db, lease: { sessionId: string; ownerId: string; generation: number }): Promise<boolean> {
  const { count } = await db.sessionLease.deleteMany({ where: { sessionId: lease.sessionId, ownerId: lease.ownerId, generation: lease.generation } });
  return count === 1;
}

/** Every lease of `ownerId` (a clean stop, or an adopter clearing a dead node's). Returns the count. */
export async function deleteLeasesOf(db: Db, ownerId: string): Promise<number> {
  const { count } = await db.sessionLease.deleteMany({ where: { ownerId } });
  return count;
}

/** The sessions whose lease `ownerId` holds (expired or not). */
export async function listLeasedSessionIds(db: Db, ownerId: string): Promise<string[]> {
  const rows = await db.sessionLease.findMany({ where: { ownerId }, select: { sessionId: true } });
  return rows.map((r) => r.sessionId);
}
