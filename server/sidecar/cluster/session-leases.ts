/**
 * The lease keeper: this sidecar's ownership of the sessions whose CLI it runs. A runner starts
 * only after `claim` (a conditional write: free, expired, or already ours), every lease held is
 * renewed with each heartbeat in one statement, and a lease is given back when its runner is
 * retired or ends for good. A renewal that finds a lease gone (another node took it, an adopter
 * deleted it) or could not reach the database before the lease ran out reports it lost: the hub
 * then stops that session's runner at once (fencing), since another node may already run it.
 *
 * Owns: the held leases (session → generation, local expiry) and the lost-lease listeners.
 * Must not: start or stop runners itself (the hub does, on `onLost`), or write heartbeats.
 */
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import {
  claimSessionLease,
  deleteLeasesOf,
  releaseSessionLease,
  renewSessionLeases,
} from "@/server/db/session-leases";
import { clusterTimings } from "./cluster-directory";
import { SessionOwnedElsewhere } from "./session-owned-elsewhere";

/** What the hub needs of the lease keeper. */
export interface SessionLeases {
  readonly selfId: string;
  /**
   * Claims the session for this node. Answers whether this node held it already (false: another
   * node, or nobody, had it: what this node remembers of the session may be stale). Throws
   * `SessionOwnedElsewhere` when another node holds an unexpired lease.
   */
  claim(sessionId: string): Promise<{ heldAlready: boolean }>;
  /** Gives the lease back (its runner is retired or ended); never throws. */
  release(sessionId: string): Promise<void>;
  /** Whether this node holds the session's lease now. */
  holds(sessionId: string): boolean;
  /** Called once for each lease found lost, with the node that holds it now when known. */
  onLost(listener: (sessionId: string) => void): () => void;
}

interface Held {
  generation: number;
  /** Local time (ms) the lease runs out unless renewed. */
  expiresAt: number;
}

/** The lease keeper on the database. */
export class LeaseKeeper implements SessionLeases {
  private readonly held = new Map<string, Held>();
  /** Claims in flight: their rows change under a renewal, which leaves them to the claim. */
  private readonly claiming = new Set<string>();
  private readonly listeners = new Set<(sessionId: string) => void>();
  private readonly leaseMs: number;
  private readonly now: () => number;
  private claimGate: (sessionId: string) => Promise<void> | undefined = () => undefined;

  constructor(
    private readonly deps: { db: Db; selfId: string; log: Pick<Logger, "info" | "warn" | "error">; leaseMs?: number; now?: () => number },
  ) {
    this.leaseMs = deps.leaseMs ?? clusterTimings.leaseMs;
    this.now = deps.now ?? Date.now;
  }

  get selfId(): string {
    return this.deps.selfId;
  }

  /** The sessions whose lease this node holds. */
  heldSessions(): string[] {
    return [...this.held.keys()];
  }

  holds(sessionId: string): boolean {
    const lease = this.held.get(sessionId);
    return lease !== undefined && lease.expiresAt > this.now();
  }

  onLost(listener: (sessionId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A wait before each claim: the adoption's settle of the session, when one runs (`Adoption.settled`). */
  gateClaims(gate: (sessionId: string) => Promise<void> | undefined): void {
    this.claimGate = gate;
  }

  async claim(sessionId: string): Promise<{ heldAlready: boolean }> {
    await this.claimGate(sessionId);
    const now = this.now();
    const before = this.held.get(sessionId);
    this.claiming.add(sessionId);
    const result = await claimSessionLease(this.deps.db, {
      sessionId,
      ownerId: this.selfId,
      now: new Date(now),
      expiresAt: new Date(now + this.leaseMs),
    }).finally(() => this.claiming.delete(sessionId));
    if (!result.claimed) {
      // not ours (any more): forget it, so a renewal does not count it lost a second time
      this.held.delete(sessionId);
      throw new SessionOwnedElsewhere(sessionId, result.holder?.ownerId ?? "unknown");
    }
    const { lease } = result;
    this.held.set(sessionId, { generation: lease.generation, expiresAt: now + this.leaseMs });
    // Ours without a break only when the row is the very lease we held, renewed (generation + 1 by this claim).
    const heldAlready = before !== undefined && before.expiresAt > now && lease.generation === before.generation + 1;
    if (!heldAlready) this.deps.log.info({ sessionId, generation: lease.generation }, "session lease claimed");
    return { heldAlready };
  }

  async release(sessionId: string): Promise<void> {
    const lease = this.held.get(sessionId);
    if (lease === undefined) return;
    this.held.delete(sessionId);
    await releaseSessionLease(this.deps.db, { sessionId, ownerId: this.selfId, generation: lease.generation }).catch((err: unknown) =>
      this.deps.log.warn({ err, sessionId }, "releasing a session lease failed (it expires on its own)"),
    );
  }

  /**
   * Renews every lease held (one statement) and answers those lost: not renewed (taken, or
   * deleted by an adopter), renewed under another generation, or, when the database cannot be
   * reached, run out locally. The lost ones are forgotten and reported to `onLost`.
   */
  async renew(): Promise<string[]> {
    const ids = this.heldSessions();
    if (ids.length === 0) return [];
    // the leases renewed: a claim while the statement runs makes a new one (a new Held)
    const renewing = new Map(ids.map((id) => [id, this.held.get(id)]));
    const now = this.now();
    const lost: string[] = [];
    try {
      const rows = await renewSessionLeases(this.deps.db, {
        ownerId: this.selfId,
        sessionIds: ids,
        now: new Date(now),
        expiresAt: new Date(now + this.leaseMs),
      });
      const renewed = new Map(rows.map((row) => [row.sessionId, row.generation]));
      for (const id of ids) {
        const lease = this.held.get(id);
        // released, or claimed again while the statement ran (in flight, or done: a new lease,
        // which this renewal may have read before the claim wrote it): the claim's answer stands
        if (lease === undefined || this.claiming.has(id) || lease !== renewing.get(id)) continue;
        const generation = renewed.get(id);
        if (generation === lease.generation) lease.expiresAt = Math.max(lease.expiresAt, now + this.leaseMs);
        else lost.push(id);
      }
    } catch (err) {
      this.deps.log.error({ err, leases: ids.length }, "renewing session leases failed");
      for (const id of ids) {
        const lease = this.held.get(id);
        if (lease !== undefined && lease.expiresAt <= now) lost.push(id);
      }
    }
    for (const id of lost) this.lose(id);
    return lost;
  }

  /** A clean stop, after the runners are stopped: every lease of this node is given back. */
  async releaseAll(): Promise<void> {
    this.held.clear();
    await deleteLeasesOf(this.deps.db, this.selfId).catch((err: unknown) =>
      this.deps.log.warn({ err }, "releasing this node's session leases failed (they expire on their own)"),
    );
  }

  private lose(sessionId: string): void {
    this.held.delete(sessionId);
    this.deps.log.warn({ sessionId }, "session lease lost: this node no longer runs the session");
    for (const listener of this.listeners) {
      try {
        listener(sessionId);
      } catch (err) {
        this.deps.log.error({ err, sessionId }, "lost-lease listener failed");
      }
    }
  }
}
