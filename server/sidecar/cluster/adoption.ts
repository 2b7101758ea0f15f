/**
 * Adoption: on each heartbeat, a live sidecar looks for dead peers (heartbeat older than the
 * lease time, not stopped cleanly, not adopted) and claims one with a conditional UPDATE, so
 * exactly one live node adopts it. For the dead node's sessions it then:
 *
 * - reaps its CLI children when they ran on this host (by the pids it recorded; never a pid of
 *   another host);
 * - cancels its pending approvals (a conditional UPDATE of rows still pending) and tells their
 *   deciders at once, so open approval cards go away;
 * - settles prompts it accepted but never answered (`settleUnansweredPrompts`, cause "failover"):
 *   a turn that was running ends with a visible `turn-interrupted` notice and its reason, a
 *   prompt no CLI read with `prompt-refused` (never acknowledged and dropped);
 * - stops its rows that still claim a live child (the next prompt resumes the conversation with
 *   `--resume`, on whichever node takes it), and deletes its leases, so the sessions are free.
 *
 * Sidecar ids named by sessions but with no node row at all (releases before node rows) are
 * adopted the same way, once: the adopter inserts their row, already adopted.
 *
 * Owns: the order of those steps. Must not: start runners (the next command does), or decide
 * which node runs a session next (leases and the forwarder do).
 */
import os from "node:os";
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import { findApproval } from "@/server/db/approvals";
import {
  approvalDecidersOf,
  cancelPendingApprovalsOf,
  recordedPidsOfNode,
  sessionIdsOfNode,
  stopSessionsOfNode,
} from "@/server/db/node-adoption";
import { claimSessionLease, deleteLeasesOf, releaseSessionLease, type SessionLeaseRow } from "@/server/db/session-leases";
import { claimDeadSidecarNode, claimUnknownSidecarId, listDeadSidecarNodes, listUnknownSidecarIds } from "@/server/db/sidecar-nodes";
import { ApprovalFact } from "@/server/shared/wire/approval";
import { resolvedFactOf, viewOfRow } from "@/server/sidecar/approval/approval-views";
import type { NotifyUsers } from "@/server/sidecar/approval/approval-service";
import type { ReapReport } from "@/server/sidecar/process/reap-orphans";
import type { SessionEventWriter } from "@/server/sidecar/session/session-event-writer";
import { settleUnansweredPrompts } from "@/server/sidecar/session/undelivered-prompts";
import { clusterTimings } from "./cluster-directory";

/** The message of an approval cancelled because the sidecar that asked died. */
export const adoptedApprovalMessage =
  "Cancelled: the server running this session stopped responding, and the Claude Code process that asked is gone. The next prompt resumes the conversation.";

export interface AdoptionDeps {
  db: Db;
  selfId: string;
  /** The hub's event writer: notices continue each session's log. */
  writer: SessionEventWriter;
  log: Pick<Logger, "info" | "warn" | "error">;
  /** Ends CLI process groups of this host by pid (`reapOrphans`). */
  reap: (pids: number[]) => Promise<Pick<ReapReport, "reaped" | "survived">>;
  /** Tells users of an approval change (the approval sockets' live path). */
  notify?: NotifyUsers;
  /** Called with the adopted sessions once their rows and logs are settled (the hub drops stale entries). */
  onAdopted?: (sessionIds: readonly string[]) => void | Promise<void>;
  host?: string;
  leaseMs?: number;
  now?: () => number;
}

/** What one adoption did. */
export interface AdoptionReport {
  nodeId: string;
  sessions: string[];
  reaped: number[];
  approvalsCancelled: number;
  promptsSettled: number;
  stopped: number;
  leasesDeleted: number;
}

export class Adoption {
  private unknownChecked = false;
  /** Sessions this node holds as an adopter while it settles them, until their hold is released. */
  private readonly settling = new Map<string, Promise<void>>();
  private readonly host: string;
  private readonly now: () => number;

  constructor(private readonly deps: AdoptionDeps) {
    this.host = deps.host ?? os.hostname();
    this.now = deps.now ?? Date.now;
  }

  /** One look for dead peers; adopts each this node wins. Run after each heartbeat. */
  async run(): Promise<AdoptionReport[]> {
    const reports: AdoptionReport[] = [];
    const now = this.now();
    const deadBefore = new Date(now - (this.deps.leaseMs ?? clusterTimings.leaseMs));
    for (const dead of await listDeadSidecarNodes(this.deps.db, deadBefore, this.deps.selfId)) {
      const won = await claimDeadSidecarNode(this.deps.db, { deadId: dead.id, adopterId: this.deps.selfId, deadBefore, now: new Date(now) });
      if (!won) continue;
      this.deps.log.warn({ nodeId: dead.id, host: dead.host, lastHeartbeat: dead.heartbeatAt.toISOString() }, "adopting the sessions of a dead sidecar");
      reports.push(await this.adopt(dead.id, dead.host));
    }
    if (!this.unknownChecked) {
      this.unknownChecked = true;
      for (const id of await listUnknownSidecarIds(this.deps.db)) {
        // Earlier releases named the node by its host name: that is where its children ran.
        const won = await claimUnknownSidecarId(this.deps.db, { deadId: id, host: id, adopterId: this.deps.selfId, now: new Date(now) });
        if (!won) continue;
        this.deps.log.info({ nodeId: id }, "adopting the sessions of a sidecar id without a node row (an earlier release)");
        reports.push(await this.adopt(id, id));
      }
    }
    return reports;
  }

  /** Takes over the sessions of `nodeId`, which this node has claimed. */
  async adopt(nodeId: string, host: string): Promise<AdoptionReport> {
    const { db } = this.deps;
    // Each session's lease is held while it is settled: a session a live node already took over
    // (its lease is that node's, unexpired) is that node's to run, and is left alone.
    const held: SessionLeaseRow[] = [];
    const leaseMs = this.deps.leaseMs ?? clusterTimings.leaseMs;
    const claim = (sessionId: string) => {
      const now = this.now();
      // `takeOwn: false`: a lease this node's own hub holds (it took the session over for a
      // command before this adoption reached it) is a live runner's, left alone like another
      // node's; taking it here would settle the new turn as the dead node's and then delete the
      // hub's lease with the adopter's hold, fencing the runner mid-turn.
      return claimSessionLease(db, { sessionId, ownerId: this.deps.selfId, now: new Date(now), expiresAt: new Date(now + leaseMs) }, { takeOwn: false });
    };
    let doneSettling!: () => void;
    const settled = new Promise<void>((resolve) => (doneSettling = resolve));
    try {
      for (const sessionId of await sessionIdsOfNode(db, nodeId)) {
        // From its claim on, a command for the session waits (`settled`): this node's hub would
        // otherwise start a turn that the settle below takes for the dead node's and refuses.
        this.settling.set(sessionId, settled);
        let claimed = await claim(sessionId);
        // The dead node's own lease, a moment from running out: it renewed its leases just after
        // its last heartbeat (the beat, then the renewal), so its heartbeat is older than the lease
        // time a little before its leases are. Claimed once it has run out, not skipped: a skipped
        // session would keep its running turn and pending approval with nobody left to settle them.
        if (!claimed.claimed && claimed.holder?.ownerId === nodeId) {
          const wait = Math.min(leaseMs, claimed.holder.expiresAt.getTime() - this.now() + 5);
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          claimed = await claim(sessionId);
        }
        if (claimed.claimed) held.push(claimed.lease);
        else {
          this.settling.delete(sessionId);
          this.deps.log.info({ sessionId, owner: claimed.holder?.ownerId }, "a dead sidecar's session already runs elsewhere");
        }
      }
      return await this.settle(
        nodeId,
        host,
        held.map((lease) => lease.sessionId),
      );
    } finally {
      // the adopter's own hold only: a runner this node started meanwhile claimed a newer generation
      for (const lease of held) await releaseSessionLease(db, lease).catch(() => undefined);
      for (const [sessionId, gate] of this.settling) if (gate === settled) this.settling.delete(sessionId);
      doneSettling();
    }
  }

  /**
   * While this node settles `sessionId` as a dead node's (it holds the session's lease as the
   * adopter), a promise of the end of that settle; otherwise undefined. The lease keeper waits
   * for it before a claim (`LeaseKeeper.gateClaims`), so a command arriving meanwhile runs on the
   * settled session: its prompt is not taken for one the dead node left unanswered.
   */
  settled(sessionId: string): Promise<void> | undefined {
    return this.settling.get(sessionId);
  }

  private async settle(nodeId: string, host: string, sessions: string[]): Promise<AdoptionReport> {
    const { db } = this.deps;
    // Its children first (while the rows still have their pids), and only on this very host.
    let reaped: number[] = [];
    if (host === this.host) {
      const pids = await recordedPidsOfNode(db, nodeId);
      if (pids.length > 0) {
        const report = await this.deps.reap(pids);
        reaped = report.reaped;
        if (report.survived.length > 0) this.deps.log.error({ nodeId, survived: report.survived }, "children of a dead sidecar survived reaping");
      }
    }
    const approvalsCancelled = await this.cancelApprovals(sessions);
    const settled =
      sessions.length === 0
        ? []
        : await settleUnansweredPrompts({ db, writer: this.deps.writer, sidecarId: nodeId, log: this.deps.log, cause: "failover", sessionIds: sessions });
    const stopped = await stopSessionsOfNode(db, nodeId, sessions);
    const leasesDeleted = await deleteLeasesOf(db, nodeId);
    const report: AdoptionReport = {
      nodeId,
      sessions,
      reaped,
      approvalsCancelled,
      promptsSettled: settled.length,
      stopped: stopped.length,
      leasesDeleted,
    };
    this.deps.log.info({ ...report, sessions: sessions.length }, "adopted the sessions of a dead sidecar");
    try {
      await this.deps.onAdopted?.(sessions);
    } catch (err) {
      this.deps.log.error({ err, nodeId }, "after-adoption hook failed");
    }
    return report;
  }

  /** Cancels the dead node's pending approvals and tells each one's deciders, so open cards go away. */
  private async cancelApprovals(sessionIds: readonly string[]): Promise<number> {
    const ids = await cancelPendingApprovalsOf(this.deps.db, sessionIds, adoptedApprovalMessage, new Date(this.now()));
    if (ids.length === 0 || this.deps.notify === undefined) return ids.length;
    const rows = (await Promise.all(ids.map((id) => findApproval(this.deps.db, id)))).filter((row) => row !== undefined);
    const deciders = await approvalDecidersOf(this.deps.db, [...new Set(rows.map((row) => row.session.workspace.id))]);
    for (const row of rows) {
      this.deps.notify(deciders.get(row.session.workspace.id) ?? [], ApprovalFact.resolved, resolvedFactOf(viewOfRow(row)));
    }
    return ids.length;
  }
}
