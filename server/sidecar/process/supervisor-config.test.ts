import { describe, expect, it } from "vitest";
import { defaultSupervisorConfig, restartDelayMs, supervisorConfigFromEnv } from "./supervisor-config";

describe("supervisor config", () => {
  it("doubles the restart delay from the base up to the cap", () => {
    const config = { restartBaseMs: 500, restartMaxMs: 8000 };
    expect([1, 2, 3, 4, 5, 6, 40].map((n) => restartDelayMs(n, config))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000, 8000,
    ]);
  });

  it("takes the stall and idle thresholds from the environment", () => {
    expect(supervisorConfigFromEnv({ CONDUIT_STALL_SEC: 90, CONDUIT_IDLE_CULL_SEC: 0 })).toEqual({
      ...defaultSupervisorConfig,
      stallMs: 90_000,
      idleCullMs: 0,
    });
  });
});
