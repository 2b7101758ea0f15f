/**
 * `npm start`'s restart policy, pure (a clock is passed in): a part that dies is started again
 * after a growing pause (0.5 s, 1 s, 2 s … capped), and a part that keeps dying is a crash loop,
 * which stops the whole group. A part that stayed up long enough starts over at the short pause.
 */

export interface RestartPolicy {
  /** The pause before the first restart. */
  initialDelayMs: number;
  /** The longest pause. */
  maxDelayMs: number;
  /** More crashes than this within `windowMs` is a crash loop. */
  maxCrashes: number;
  windowMs: number;
  /** Up this long after a (re)start: the next crash waits `initialDelayMs` again. */
  stableAfterMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 10_000,
  maxCrashes: 5,
  windowMs: 60_000,
  stableAfterMs: 30_000,
};

export type CrashDecision =
  | { action: "restart"; delayMs: number; crashes: number }
  | { action: "give-up"; crashes: number };

/** The crash history of one part. */
export class CrashTracker {
  private crashes: number[] = [];
  private consecutive = 0;
  private startedAt: number;

  constructor(
    private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
  }

  /** The part was (re)started now. */
  started(): void {
    this.startedAt = this.now();
  }

  /** The part died: restart it after `delayMs`, or give up (a crash loop). */
  crashed(): CrashDecision {
    const at = this.now();
    if (at - this.startedAt >= this.policy.stableAfterMs) this.consecutive = 0;
    this.crashes = this.crashes.filter((t) => at - t < this.policy.windowMs);
    this.crashes.push(at);
    this.consecutive += 1;
    const crashes = this.crashes.length;
    if (crashes > this.policy.maxCrashes) return { action: "give-up", crashes };
    const delayMs = Math.min(this.policy.initialDelayMs * 2 ** (this.consecutive - 1), this.policy.maxDelayMs);
    return { action: "restart", delayMs, crashes };
  }
}

/** `500` → `0.5 s`; `60000` → `60 s`. */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}
