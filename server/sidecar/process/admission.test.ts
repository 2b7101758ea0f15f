import { describe, expect, it } from "vitest";
import { AppError } from "@/server/shared/errors/app-error";
import { createAdmission, readAvailableMemory } from "./admission";

const MB = 1024 * 1024;

describe("createAdmission", () => {
  it("admits up to the cap, and again once a slot is released", () => {
    const admission = createAdmission({ maxLive: 2, minFreeBytes: 0, freeMemory: () => 1e12 });
    const a = admission.admit("a");
    admission.admit("b");
    expect(() => admission.admit("c")).toThrow(AppError);
    expect(() => admission.admit("c")).toThrow(/already running 2 Claude sessions/);
    // a session holding a slot is not counted twice
    expect(() => admission.admit("a")).not.toThrow();
    a.release();
    a.release();
    expect(admission.liveCount).toBe(1);
    expect(() => admission.admit("c")).not.toThrow();
  });

  it("refuses by free memory with a retryable, explained error", () => {
    let free = 300 * MB;
    const admission = createAdmission({ maxLive: 10, minFreeBytes: 400 * MB, freeMemory: () => free });
    let refusal: unknown;
    try {
      admission.admit("a");
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({
      code: "unavailable",
      message:
        "The server has 300 MB of memory available and needs 400 MB to start another Claude session. Try again in a minute.",
      details: { reason: "low_memory", retryable: true },
    });
    free = 500 * MB;
    expect(() => admission.admit("a")).not.toThrow();
  });

  it("reads available memory from the system", () => {
    expect(readAvailableMemory()).toBeGreaterThan(0);
  });
});
