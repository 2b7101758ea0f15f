import { describe, expect, it } from "vitest";
import { CrashTracker, DEFAULT_RESTART_POLICY, seconds } from "./start-supervisor";

function tracker(policy = DEFAULT_RESTART_POLICY) {
  let t = 1_000_000;
  const clock = { advance: (ms: number) => (t += ms) };
  return { crashes: new CrashTracker(policy, () => t), clock };
}

describe("CrashTracker", () => {
  it("restarts after 0.5 s, 1 s, 2 s, 4 s … then calls more than five crashes in a minute a loop", () => {
    const { crashes, clock } = tracker();
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(100);
      const decision = crashes.crashed();
      expect(decision.action).toBe("restart");
      if (decision.action === "restart") delays.push(decision.delayMs);
      clock.advance(delays.at(-1)!);
      crashes.started();
    }
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000]);
    clock.advance(100);
    expect(crashes.crashed()).toEqual({ action: "give-up", crashes: 6 });
  });

  it("caps the pause", () => {
    const { crashes, clock } = tracker({ ...DEFAULT_RESTART_POLICY, maxCrashes: 100, windowMs: 1, maxDelayMs: 3000 });
    let last = 0;
    for (let i = 0; i < 10; i++) {
      clock.advance(10);
      const d = crashes.crashed();
      if (d.action === "restart") last = d.delayMs;
    }
    expect(last).toBe(3000);
  });

  it("forgets crashes outside the window and starts the pause over after a stable run", () => {
    const { crashes, clock } = tracker();
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      crashes.crashed();
      crashes.started();
    }
    clock.advance(DEFAULT_RESTART_POLICY.windowMs);
    expect(crashes.crashed()).toEqual({ action: "restart", delayMs: 500, crashes: 1 });
  });

  it("prints seconds", () => {
    expect(seconds(500)).toBe("0.5 s");
    expect(seconds(60_000)).toBe("60 s");
  });
});
