/**
 * Sign-in throttling that cannot be turned against an account's owner. Failures slow down the
 * (email, client address) pair that made them — after a few free tries each further attempt
 * waits twice as long as the last, up to a cap — and an address failing across many emails is
 * stopped for a while. Nothing is keyed on the email alone, so an attack on an email from other
 * addresses never refuses its owner's right password from a clean address. Clock injected.
 */

export interface SignInThrottleSettings {
  /** failures of a pair before delays start */
  freeFailures: number;
  /** the first delay; each further failure doubles it */
  baseDelayMs: number;
  maxDelayMs: number;
  /** a pair's failures are forgotten this long after its last one */
  pairMemoryMs: number;
  /** failures an address may make across all emails within `addressWindowMs` */
  addressMaxFailures: number;
  addressWindowMs: number;
}

export const defaultSignInThrottle: SignInThrottleSettings = {
  freeFailures: 3,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  pairMemoryMs: 15 * 60_000,
  addressMaxFailures: 30,
  addressWindowMs: 15 * 60_000,
};

/** Whether an attempt may check the password now, and if not for how long it must wait. */
export type ThrottleVerdict = { ok: true } | { ok: false; retryAfterMs: number; scope: "pair" | "address" };

/** Most keys kept before expired ones are swept (bounds memory under a spray of addresses). */
const sweepAbove = 10_000;

export class SignInThrottle {
  private readonly pairs = new Map<string, { failures: number; lastAt: number }>();
  private readonly addresses = new Map<string, number[]>();

  constructor(
    private readonly settings: SignInThrottleSettings = defaultSignInThrottle,
    private readonly now: () => number = Date.now,
  ) {}

  /** Asked before the password is checked: a refused attempt is not checked at all. */
  check(email: string, address: string): ThrottleVerdict {
    const t = this.now();
    const times = this.recentAddressFailures(address, t);
    if (times.length >= this.settings.addressMaxFailures) {
      return { ok: false, retryAfterMs: times[0]! + this.settings.addressWindowMs - t, scope: "address" };
    }
    const pair = this.livePair(email, address, t);
    if (pair) {
      const wait = pair.lastAt + this.delayAfter(pair.failures) - t;
      if (wait > 0) return { ok: false, retryAfterMs: wait, scope: "pair" };
    }
    return { ok: true };
  }

  recordFailure(email: string, address: string): void {
    const t = this.now();
    const key = pairKey(email, address);
    const pair = this.livePair(email, address, t);
    this.pairs.set(key, { failures: (pair?.failures ?? 0) + 1, lastAt: t });
    const times = this.recentAddressFailures(address, t);
    times.push(t);
    this.addresses.set(address, times);
    if (this.pairs.size > sweepAbove || this.addresses.size > sweepAbove) this.sweep(t);
  }

  /** The right password: the pair starts afresh (the address's count stays, it spans emails). */
  recordSuccess(email: string, address: string): void {
    this.pairs.delete(pairKey(email, address));
  }

  /** The wait imposed after `failures` failures of one pair. */
  delayAfter(failures: number): number {
    const { freeFailures, baseDelayMs, maxDelayMs } = this.settings;
    if (failures < freeFailures) return 0;
    return Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(failures - freeFailures, 30));
  }

  private livePair(email: string, address: string, t: number): { failures: number; lastAt: number } | undefined {
    const key = pairKey(email, address);
    const pair = this.pairs.get(key);
    if (pair && t - pair.lastAt >= this.settings.pairMemoryMs) {
      this.pairs.delete(key);
      return undefined;
    }
    return pair;
  }

  private recentAddressFailures(address: string, t: number): number[] {
    const times = this.addresses.get(address) ?? [];
    const fresh = times.filter((at) => t - at < this.settings.addressWindowMs);
    if (fresh.length === 0) this.addresses.delete(address);
    else if (fresh.length !== times.length) this.addresses.set(address, fresh);
    return fresh;
  }

  private sweep(t: number): void {
    for (const [key, pair] of this.pairs) if (t - pair.lastAt >= this.settings.pairMemoryMs) this.pairs.delete(key);
    for (const address of [...this.addresses.keys()]) this.recentAddressFailures(address, t);
  }
}

/** The web process's one throttle: sign-ins and password changes share it. */
export const signInThrottle = new SignInThrottle();

function pairKey(email: string, address: string): string {
  return `${email.toLowerCase()}\n${address}`;
}

/** "Try again in N s." with N rounded up. */
export function throttledMessage(retryAfterMs: number): string {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return `Too many failed sign-in attempts. Try again in ${seconds} s.`;
}

/**
 * The client's address as the edge saw it: its `x-conduit-client-ip` header (EDGE_CLIENT_IP_HEADER,
 * the key of the edge's own rate limits; behind a trusted proxy, the address that proxy added).
 * The edge drops any such header from outside, and the web app answers only requests the edge
 * vouched for (proxy.ts), so a caller cannot pick its own bucket; `X-Forwarded-For` is never read.
 */
export function clientAddressOf(edgeClientIp: string | undefined): string {
  return edgeClientIp?.trim().slice(0, 100) || "local";
}
