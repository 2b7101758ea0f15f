/**
 * Fair limits of the credential proxy, per session and per kind of call: requests in flight and
 * requests started in the last minute (a sliding window). Beyond them the proxy answers 429 with
 * `retry-after`, which the CLI honours (protocol reference §10.1). A refused request takes no slot.
 */

/** One kind of call's caps; 0 means no cap. */
export interface CallLimits {
  maxConcurrent: number;
  maxPerMinute: number;
}

/** Why a request was refused. */
export interface LimitRefusal {
  ok: false;
  cap: "concurrency" | "rate";
  retryAfterSeconds: number;
  message: string;
}

/** A slot taken: give it back once the exchange is over (idempotent). */
export interface LimitSlot {
  ok: true;
  release(): void;
}

interface Window {
  inFlight: number;
  /** Start times of the requests admitted in the last minute, oldest first. */
  started: number[];
}

const minuteMs = 60_000;

/** Counters per key (`<session>:<kind>`), created on first use and dropped once idle. */
export class SessionLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes a slot for one request of `key` under `limits`, or says which cap it hit. */
  acquire(key: string, limits: CallLimits, what: string): LimitSlot | LimitRefusal {
    const at = this.now();
    const w = this.windows.get(key) ?? { inFlight: 0, started: [] };
    while (w.started.length > 0 && w.started[0]! <= at - minuteMs) w.started.shift();
    if (limits.maxConcurrent > 0 && w.inFlight >= limits.maxConcurrent) {
      return {
        ok: false,
        cap: "concurrency",
        retryAfterSeconds: 1,
        message: `This session already has ${w.inFlight} ${what} in flight, the most Conduit allows at once; retry when one has ended.`,
      };
    }
    if (limits.maxPerMinute > 0 && w.started.length >= limits.maxPerMinute) {
      const freeAt = w.started[w.started.length - limits.maxPerMinute]! + minuteMs;
      return {
        ok: false,
        cap: "rate",
        retryAfterSeconds: Math.max(1, Math.ceil((freeAt - at) / 1000)),
        message: `This session has made ${w.started.length} ${what} in the last minute, the most Conduit allows; retry in a moment.`,
      };
    }
    w.inFlight++;
    w.started.push(at);
    this.windows.set(key, w);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        w.inFlight--;
        if (w.inFlight === 0 && (w.started.at(-1) ?? -Infinity) <= this.now() - minuteMs) this.windows.delete(key);
      },
    };
  }

  /** Requests of `key` in flight now. */
  inFlight(key: string): number {
    return this.windows.get(key)?.inFlight ?? 0;
  }

  /** Drops the windows with nothing in flight and nothing started in the last minute (bounded memory). */
  sweep(): void {
    const cutoff = this.now() - minuteMs;
    for (const [key, w] of this.windows) if (w.inFlight === 0 && (w.started.at(-1) ?? -Infinity) <= cutoff) this.windows.delete(key);
  }
}
