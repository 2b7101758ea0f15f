import { describe, expect, it } from "vitest";
import { clientAddressOf, SignInThrottle, throttledMessage, type SignInThrottleSettings } from "./rate-limit";

const settings: SignInThrottleSettings = {
  freeFailures: 3,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  pairMemoryMs: 15 * 60_000,
  addressMaxFailures: 30,
  addressWindowMs: 15 * 60_000,
};

function throttleAt(start = 0) {
  const clock = { t: start };
  return { clock, throttle: new SignInThrottle(settings, () => clock.t) };
}

describe("SignInThrottle", () => {
  it("lets the first failures of a pair through, then doubles the delay up to the cap", () => {
    const { clock, throttle } = throttleAt();
    const waits: number[] = [];
    for (let i = 0; i < 10; i++) {
      const verdict = throttle.check("a@x.test", "1.1.1.1");
      if (!verdict.ok) {
        waits.push(verdict.retryAfterMs);
        clock.t += verdict.retryAfterMs;
        expect(throttle.check("a@x.test", "1.1.1.1")).toEqual({ ok: true });
      }
      throttle.recordFailure("a@x.test", "1.1.1.1");
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000]);
  });

  it("answers with the time left, without waiting", () => {
    const { clock, throttle } = throttleAt();
    for (let i = 0; i < 4; i++) throttle.recordFailure("a@x.test", "1.1.1.1");
    clock.t += 500;
    expect(throttle.check("a@x.test", "1.1.1.1")).toEqual({ ok: false, retryAfterMs: 1500, scope: "pair" });
    expect(throttledMessage(1500)).toBe("Too many failed sign-in attempts. Try again in 2 s.");
  });

  it("accepts the right password from a clean address during an attack on the same email", () => {
    const { clock, throttle } = throttleAt();
    // many attacker addresses hammering one email, each as often as it may
    for (let round = 0; round < 20; round++) {
      for (let n = 0; n < 50; n++) {
        const address = `10.0.0.${n}`;
        if (throttle.check("owner@x.test", address).ok) throttle.recordFailure("owner@x.test", address);
      }
      clock.t += 1000;
    }
    expect(throttle.check("owner@x.test", "10.0.0.1").ok).toBe(false);
    expect(throttle.check("owner@x.test", "192.168.1.20")).toEqual({ ok: true });
    throttle.recordSuccess("owner@x.test", "192.168.1.20");
    expect(throttle.check("owner@x.test", "192.168.1.20")).toEqual({ ok: true });
  });

  it("caps an address's failures across all emails within the window", () => {
    const { clock, throttle } = throttleAt();
    for (let i = 0; i < 30; i++) {
      expect(throttle.check(`user${i}@x.test`, "6.6.6.6").ok).toBe(true);
      throttle.recordFailure(`user${i}@x.test`, "6.6.6.6");
      clock.t += 1000;
    }
    const verdict = throttle.check("fresh@x.test", "6.6.6.6");
    expect(verdict).toEqual({ ok: false, retryAfterMs: 15 * 60_000 - 30_000, scope: "address" });
    expect(throttle.check("fresh@x.test", "7.7.7.7")).toEqual({ ok: true });
    clock.t += 15 * 60_000 - 30_000;
    expect(throttle.check("fresh@x.test", "6.6.6.6")).toEqual({ ok: true });
  });

  it("forgets a pair after a success or a quiet spell", () => {
    const { clock, throttle } = throttleAt();
    for (let i = 0; i < 5; i++) throttle.recordFailure("a@x.test", "1.1.1.1");
    expect(throttle.check("a@x.test", "1.1.1.1").ok).toBe(false);
    throttle.recordSuccess("a@x.test", "1.1.1.1");
    expect(throttle.check("a@x.test", "1.1.1.1")).toEqual({ ok: true });
    for (let i = 0; i < 5; i++) throttle.recordFailure("b@x.test", "1.1.1.1");
    clock.t += 15 * 60_000;
    expect(throttle.check("b@x.test", "1.1.1.1")).toEqual({ ok: true });
    throttle.recordFailure("b@x.test", "1.1.1.1");
    expect(throttle.check("b@x.test", "1.1.1.1")).toEqual({ ok: true });
  });

  it("treats email case as one pair", () => {
    const { throttle } = throttleAt();
    for (let i = 0; i < 3; i++) throttle.recordFailure("A@X.test", "1.1.1.1");
    expect(throttle.check("a@x.test", "1.1.1.1").ok).toBe(false);
  });
});

describe("clientAddressOf", () => {
  it("takes the address the edge wrote in its own header", () => {
    expect(clientAddressOf("203.0.113.9")).toBe("203.0.113.9");
    expect(clientAddressOf(" 198.51.100.7 ")).toBe("198.51.100.7");
    expect(clientAddressOf("x".repeat(500))).toHaveLength(100);
    expect(clientAddressOf(undefined)).toBe("local");
    expect(clientAddressOf("")).toBe("local");
  });
});
