/**
 * A fixed-window failure counter: after `max` failures within `windowMs` a key is locked
 * until the window ends. Used for sign-in attempts per email and per client address.
 */
export class FailureLimiter {
  private readonly entries = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until `key` may try again, or 0 when it may try now. */
  retryAfterMs(key: string): number {
    const entry = this.entries.get(key);
    if (!entry) return 0;
    const t = this.now();
    if (t >= entry.resetAt) {
      this.entries.delete(key);
      return 0;
    }
    return entry.count >= this.max ? entry.resetAt - t : 0;
  }

  recordFailure(key: string): void {
    const t = this.now();
    const entry = this.entries.get(key);
    if (!entry || t >= entry.resetAt) this.entries.set(key, { count: 1, resetAt: t + this.windowMs });
    else entry.count += 1;
    if (this.entries.size > 10_000) this.prune(t);
  }

  reset(key: string): void {
    this.entries.delete(key);
  }

  private prune(t: number): void {
    for (const [key, entry] of this.entries) if (t >= entry.resetAt) this.entries.delete(key);
  }
}
