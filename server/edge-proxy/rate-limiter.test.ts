import { describe, expect, it } from "vitest";
import { createRateLimiter } from "./rate-limiter";

describe("createRateLimiter", () => {
  it("allows a burst of `capacity`, then one per refill interval", () => {
    let clock = 0;
    const limiter = createRateLimiter({ capacity: 3, refillPerMinute: 6 }, () => clock);
    expect([1, 2, 3].map(() => limiter.take("a").allowed)).toEqual([true, true, true]);
    expect(limiter.take("a")).toEqual({ allowed: false, retryAfterSeconds: 10 });
    clock += 4_000;
    expect(limiter.take("a")).toEqual({ allowed: false, retryAfterSeconds: 6 });
    clock += 6_000;
    expect(limiter.take("a").allowed).toBe(true);
    expect(limiter.take("b").allowed).toBe(true);
  });

  it("refills no further than capacity after a long pause", () => {
    let clock = 0;
    const limiter = createRateLimiter({ capacity: 2, refillPerMinute: 60 }, () => clock);
    limiter.take("a");
    clock += 3_600_000;
    expect([1, 2, 3].map(() => limiter.take("a").allowed)).toEqual([true, true, false]);
  });

  it("forgets idle keys when it holds too many, keeping busy ones", () => {
    let clock = 0;
    const limiter = createRateLimiter({ capacity: 1, refillPerMinute: 1 }, () => clock, 10);
    limiter.take("busy");
    for (let i = 0; i < 100; i++) {
      clock += 1;
      limiter.take(`visitor-${i}`);
    }
    // "busy" was the least recently used; eviction of the oldest may drop it, which only
    // ever errs towards allowing. A fresh key is always allowed.
    expect(limiter.take("fresh").allowed).toBe(true);
    expect(limiter.take("visitor-99").allowed).toBe(false);
  });
});
