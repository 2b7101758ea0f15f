import { describe, expect, it } from "vitest";
import { SessionLimiter } from "./session-limits";

describe("SessionLimiter", () => {
  it("caps requests in flight per key, and a released slot frees one", () => {
    const limiter = new SessionLimiter(() => 0);
    const limits = { maxConcurrent: 2, maxPerMinute: 0 };
    const a = limiter.acquire("s1", limits, "calls");
    const b = limiter.acquire("s1", limits, "calls");
    expect(limiter.acquire("s2", limits, "calls").ok).toBe(true); // another session is not affected
    const c = limiter.acquire("s1", limits, "calls");
    expect(c).toMatchObject({ ok: false, cap: "concurrency", retryAfterSeconds: 1 });
    expect(a.ok && b.ok).toBe(true);
    if (a.ok) {
      a.release();
      a.release(); // idempotent
    }
    expect(limiter.inFlight("s1")).toBe(1);
    expect(limiter.acquire("s1", limits, "calls").ok).toBe(true);
    expect(limiter.acquire("s1", limits, "calls").ok).toBe(false);
  });

  it("caps requests started per sliding minute and says when one frees", () => {
    let now = 1_000_000;
    const limiter = new SessionLimiter(() => now);
    const limits = { maxConcurrent: 0, maxPerMinute: 3 };
    for (let i = 0; i < 3; i++) {
      const slot = limiter.acquire("s", limits, "calls");
      if (slot.ok) slot.release();
      now += 10_000;
    }
    const refused = limiter.acquire("s", limits, "calls");
    expect(refused).toMatchObject({ ok: false, cap: "rate", retryAfterSeconds: 30 });
    now += 30_000; // the first start leaves the window
    expect(limiter.acquire("s", limits, "calls").ok).toBe(true);
    expect(limiter.acquire("s", limits, "calls").ok).toBe(false);
  });

  it("treats 0 as no cap and forgets idle keys", () => {
    let now = 0;
    const limiter = new SessionLimiter(() => now);
    for (let i = 0; i < 500; i++) expect(limiter.acquire("s", { maxConcurrent: 0, maxPerMinute: 0 }, "calls").ok).toBe(true);
    now += 61_000;
    const slot = limiter.acquire("t", { maxConcurrent: 1, maxPerMinute: 1 }, "calls");
    if (slot.ok) slot.release();
    now += 61_000;
    limiter.sweep();
    expect(limiter.inFlight("t")).toBe(0);
  });
});
