import { describe, expect, it } from "vitest";
import { FailureLimiter } from "./rate-limit";

describe("FailureLimiter", () => {
  it("locks a key after max failures until the window ends", () => {
    let now = 0;
    const limiter = new FailureLimiter(3, 1000, () => now);
    for (let i = 0; i < 2; i++) limiter.recordFailure("a");
    expect(limiter.retryAfterMs("a")).toBe(0);
    limiter.recordFailure("a");
    expect(limiter.retryAfterMs("a")).toBe(1000);
    expect(limiter.retryAfterMs("b")).toBe(0);
    now = 400;
    expect(limiter.retryAfterMs("a")).toBe(600);
    now = 1000;
    expect(limiter.retryAfterMs("a")).toBe(0);
  });

  it("forgets failures after a success", () => {
    const limiter = new FailureLimiter(2, 1000, () => 0);
    limiter.recordFailure("a");
    limiter.reset("a");
    limiter.recordFailure("a");
    expect(limiter.retryAfterMs("a")).toBe(0);
  });
});
