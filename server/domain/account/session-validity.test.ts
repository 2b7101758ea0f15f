import { describe, expect, it } from "vitest";
import { isSessionCurrent, sessionVersionOf } from "./session-validity";

describe("session validity", () => {
  it("reads the sv claim, defaulting to 0 for cookies without one", () => {
    expect(sessionVersionOf({ sv: 3 })).toBe(3);
    expect(sessionVersionOf({})).toBe(0);
    expect(sessionVersionOf(null)).toBe(0);
    expect(sessionVersionOf({ sv: "3" })).toBe(0);
    expect(sessionVersionOf({ sv: 1.5 })).toBe(0);
  });

  it("accepts the current version of an enabled account only", () => {
    expect(isSessionCurrent({ disabledAt: null, sessionVersion: 2 }, 2)).toBe(true);
    expect(isSessionCurrent({ disabledAt: null, sessionVersion: 3 }, 2)).toBe(false);
    expect(isSessionCurrent({ disabledAt: new Date(), sessionVersion: 2 }, 2)).toBe(false);
  });
});
