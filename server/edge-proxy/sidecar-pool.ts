// The edge's list of sidecars with active health checks. Web-standard only (fetch, timers,
// AbortController): Deno runs it unchanged.
import { describeError, type EdgeLog } from "./edge-log";
import {
  chooseSidecar,
  initialHealth,
  recordCheck,
  upstreamIdOf,
  type HealthState,
  type HealthThresholds,
  type SidecarChoice,
} from "./sidecar-routing";

/** The sidecar's cheap health route (server/sidecar/metrics: id, pid, live sessions). */
export const SIDECAR_HEALTH_PATH = "/healthz";

export interface HealthCheckSettings extends HealthThresholds {
  /** Pause between two rounds of checks. */
  intervalMs: number;
  /** A check that has not answered by then failed. */
  timeoutMs: number;
}

/**
 * A check every 2 s, out after three failures in a row (a dead sidecar refuses at once, so it
 * stops getting new connections within about 6 s; a busy one gets 2 s per answer and three
 * chances before its browsers are moved), back after two good answers (one lucky answer from a
 * sidecar that is still starting is not enough).
 */
export const DEFAULT_HEALTH_CHECK: HealthCheckSettings = { intervalMs: 2_000, timeoutMs: 2_000, fallAfter: 3, riseAfter: 2 };

export interface SidecarPoolOptions {
  origins: readonly string[];
  fetch: typeof fetch;
  log?: EdgeLog;
  /** Merged over {@link DEFAULT_HEALTH_CHECK}. `false`: never check (every upstream stays in). */
  healthCheck?: Partial<HealthCheckSettings> | false;
}

interface Member {
  origin: string;
  id: string;
  health: HealthState;
  /** Aborted when the upstream goes out: requests still waiting on it end at once. */
  gone: AbortController;
}

/** An upstream went out of (`healthy: false`) or back into the rotation. */
export type PoolChangeListener = (origin: string, healthy: boolean) => void;

/**
 * The sidecars behind the edge. With one sidecar nothing is checked (routing cannot change, so
 * `npm start` behaves as before); with several, each is asked `GET /healthz` every
 * `intervalMs`, and {@link chooseSidecar}'s rules pick among the healthy ones.
 */
export class SidecarPool {
  private readonly members: Member[];
  private readonly settings: HealthCheckSettings;
  private readonly listeners = new Set<PoolChangeListener>();
  private readonly log: EdgeLog;
  private turn = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private round: Promise<void> | undefined;

  constructor(private readonly options: SidecarPoolOptions) {
    if (options.origins.length === 0) throw new Error("SidecarPool: at least one sidecar origin is needed");
    const origins = [...new Set(options.origins.map((o) => new URL(o).origin))];
    this.members = origins.map((origin) => ({ origin, id: upstreamIdOf(origin), health: initialHealth, gone: new AbortController() }));
    this.settings = { ...DEFAULT_HEALTH_CHECK, ...(options.healthCheck || {}) };
    this.log = options.log ?? (() => {});
    if (options.healthCheck !== false && this.members.length > 1) this.schedule(0);
  }

  /** Where a socket request goes, given the sticky cookie's id. */
  choose(stickyId: string | undefined): SidecarChoice {
    const choice = chooseSidecar(
      this.members.map((m) => ({ origin: m.origin, id: m.id, healthy: m.health.healthy })),
      stickyId,
      this.turn,
    );
    if (choice.usedTurn) this.turn = (this.turn + 1) % 1_000_000;
    return { origin: choice.origin, id: choice.id, setCookie: choice.setCookie };
  }

  /** Aborted when `origin` goes out of the rotation. */
  signalOf(origin: string): AbortSignal {
    return this.members.find((m) => m.origin === origin)?.gone.signal ?? new AbortController().signal;
  }

  /** Every upstream with its health, in the configured order. */
  status(): { origin: string; id: string; healthy: boolean }[] {
    return this.members.map((m) => ({ origin: m.origin, id: m.id, healthy: m.health.healthy }));
  }

  /** Called once per change; returns the unsubscribe function. */
  onDidChange(listener: PoolChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** One round of checks now (tests; the timer runs the same). */
  checkNow(): Promise<void> {
    this.round ??= Promise.all(this.members.map((m) => this.check(m))).then(() => {
      this.round = undefined;
    });
    return this.round;
  }

  /** Stops the checks; no timer is left. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.round;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.checkNow().then(() => this.schedule(this.settings.intervalMs));
    }, delayMs);
  }

  private async check(member: Member): Promise<void> {
    const { ok, reason } = await this.probe(member.origin);
    if (this.closed) return;
    const { state, changed } = recordCheck(member.health, ok, this.settings);
    member.health = state;
    if (!changed) return;
    if (state.healthy) {
      this.log({ level: "info", event: "upstream_in", upstream: member.origin });
    } else {
      this.log({ level: "warn", event: "upstream_out", upstream: member.origin, ...(reason ? { reason } : {}) });
      member.gone.abort();
      member.gone = new AbortController();
    }
    for (const listener of this.listeners) listener(member.origin, state.healthy);
  }

  private async probe(origin: string): Promise<{ ok: boolean; reason?: string }> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.settings.timeoutMs);
    try {
      const res = await this.options.fetch(origin + SIDECAR_HEALTH_PATH, { signal: timeout.signal, redirect: "manual" });
      await res.body?.cancel();
      return res.ok ? { ok: true } : { ok: false, reason: `status ${res.status}` };
    } catch (err) {
      return { ok: false, reason: timeout.signal.aborted ? `no answer within ${this.settings.timeoutMs} ms` : describeError(err) };
    } finally {
      clearTimeout(timer);
    }
  }
}
