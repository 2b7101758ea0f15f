/**
 * This sidecar's heartbeat: its `SidecarNode` row written at start (refused when another live
 * process already beats under the same id), then every `clusterTimings.heartbeatMs` its free
 * memory and live sessions, followed by the work that rides on each beat (renewing leases,
 * looking for dead peers to adopt). A clean stop marks the row stopped. A failed write is logged
 * and retried on the next beat; it never stops the sidecar (its leases run out instead, and the
 * lease keeper fences what it can no longer prove it owns).
 *
 * Owns: the node row of this process and the beat timer. Must not: claim leases or adopt
 * sessions itself (the tasks given to it do).
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import { beatSidecarNode, findSidecarNode, markSidecarStopped, setSidecarNodeUrl, upsertSidecarNode } from "@/server/db/sidecar-nodes";
import { clusterTimings } from "./cluster-directory";

/** Free memory of this host in MB: MemAvailable from /proc/meminfo, else what Node reports. */
export function freeMemoryMb(meminfo: () => string = () => readFileSync("/proc/meminfo", "utf8")): number {
  try {
    const match = /^MemAvailable:\s+(\d+)\s+kB/m.exec(meminfo());
    if (match) return Math.floor(Number(match[1]) / 1024);
  } catch {
    // not Linux, or /proc unreadable: os.freemem below
  }
  return Math.floor(os.freemem() / (1024 * 1024));
}

/** Whether a process of this host is running (signal 0 probes without touching it). */
export function pidRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Thrown at start when another live process beats under this node id. */
export class DuplicateSidecarId extends Error {
  constructor(id: string, other: { host: string; pid: number; heartbeatAt: Date }) {
    super(
      `Another sidecar is running with the id "${id}" (host ${other.host}, pid ${other.pid}, last heartbeat ${other.heartbeatAt.toISOString()}). ` +
        "Two processes must never share a node id: give each sidecar its own CONDUIT_SIDECAR_ID (or its own DATA_DIR), or stop the other one.",
    );
    this.name = "DuplicateSidecarId";
  }
}

export interface NodeHeartbeatDeps {
  db: Db;
  selfId: string;
  /** Where peers and the edge reach this sidecar (informational). */
  url: string | null;
  /** Live CLI sessions of this node, reported with each beat. */
  liveSessions: () => number;
  log: Pick<Logger, "info" | "warn" | "error">;
  host?: string;
  pid?: number;
  heartbeatMs?: number;
  leaseMs?: number;
  now?: () => number;
  freeMb?: () => number;
  /** Whether a pid of this host runs (a row of this host whose pid is gone is no rival). */
  pidRunning?: (pid: number) => boolean;
}

export class NodeHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private readonly tasks: Array<{ name: string; run: () => Promise<unknown> }> = [];
  private readonly host: string;
  private readonly pid: number;
  private readonly now: () => number;
  private stopped = false;

  constructor(private readonly deps: NodeHeartbeatDeps) {
    this.host = deps.host ?? os.hostname();
    this.pid = deps.pid ?? process.pid;
    this.now = deps.now ?? Date.now;
  }

  /** Work to run after each beat, in the order added (lease renewal before adoption). */
  afterBeat(name: string, run: () => Promise<unknown>): void {
    this.tasks.push({ name, run });
  }

  /**
   * Writes this node's row, refusing a fresh heartbeat of another live process under this id
   * (before anything else of the node runs: a twin would reap the other's children).
   */
  async register(): Promise<void> {
    const now = this.now();
    const leaseMs = this.deps.leaseMs ?? clusterTimings.leaseMs;
    const row = await findSidecarNode(this.deps.db, this.deps.selfId);
    if (row !== null && row.stoppedAt === null && row.heartbeatAt.getTime() > now - leaseMs && (row.host !== this.host || row.pid !== this.pid)) {
      const sameHostGone = row.host === this.host && !(this.deps.pidRunning ?? pidRunning)(row.pid);
      if (!sameHostGone) throw new DuplicateSidecarId(this.deps.selfId, row);
    }
    await upsertSidecarNode(this.deps.db, { id: this.deps.selfId, host: this.host, pid: this.pid, url: this.deps.url, now: new Date(now) });
    this.deps.log.info({ sidecarId: this.deps.selfId, host: this.host, pid: this.pid }, "sidecar node registered");
  }

  /** Beats now (its tasks too), then every `heartbeatMs`; `url` is where this sidecar now listens. */
  async start(url?: string): Promise<void> {
    if (url !== undefined) await setSidecarNodeUrl(this.deps.db, { id: this.deps.selfId, host: this.host, pid: this.pid, url }).catch((err: unknown) => this.deps.log.warn({ err }, "recording this sidecar's url failed"));
    await this.beat();
    this.schedule();
  }

  /** One beat and its tasks now (tests drive it; the timer calls it too). Never throws. */
  beat(): Promise<void> {
    this.beating ??= this.beatOnce().finally(() => {
      this.beating = undefined;
    });
    return this.beating;
  }

  /** Stops beating (a crash-like stop in tests: the row stays as it was). */
  async pause(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.beating;
  }

  /** A clean stop, once this node's children are stopped and its leases released: the row says so. */
  async stop(): Promise<void> {
    await this.pause();
    await markSidecarStopped(this.deps.db, { id: this.deps.selfId, host: this.host, pid: this.pid, now: new Date(this.now()) }).catch((err: unknown) =>
      this.deps.log.warn({ err }, "marking this sidecar node stopped failed"),
    );
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.beat().finally(() => this.schedule());
    }, this.deps.heartbeatMs ?? clusterTimings.heartbeatMs);
    this.timer.unref();
  }

  private async beatOnce(): Promise<void> {
    try {
      const current = await beatSidecarNode(this.deps.db, {
        id: this.deps.selfId,
        host: this.host,
        pid: this.pid,
        now: new Date(this.now()),
        freeMb: (this.deps.freeMb ?? freeMemoryMb)(),
        liveSessions: this.deps.liveSessions(),
      });
      if (!current) this.deps.log.error({ sidecarId: this.deps.selfId }, "this sidecar's node row was taken by another process; its heartbeat did not count");
    } catch (err) {
      this.deps.log.error({ err }, "sidecar heartbeat write failed");
    }
    for (const task of this.tasks) {
      if (this.stopped) return;
      try {
        await task.run();
      } catch (err) {
        this.deps.log.error({ err, task: task.name }, "heartbeat task failed");
      }
    }
  }
}
