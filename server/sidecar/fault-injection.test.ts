import { describe, expect, it } from "vitest";
import { armedFaultOf } from "./fault-injection";

describe("armedFaultOf", () => {
  it("is inert without CONDUIT_FAULT", () => {
    expect(armedFaultOf({ NODE_ENV: "production" })).toBeUndefined();
    expect(armedFaultOf({ CONDUIT_FAULT: "" })).toBeUndefined();
  });
  it("arms a known point outside production", () => {
    expect(armedFaultOf({ CONDUIT_FAULT: "crash-after-prompt-event", NODE_ENV: "test" })).toBe(
      "crash-after-prompt-event",
    );
  });
  it("refuses any fault in production and unknown points", () => {
    expect(() => armedFaultOf({ CONDUIT_FAULT: "crash-after-prompt-event", NODE_ENV: "production" })).toThrow(
      /refused when NODE_ENV=production/,
    );
    expect(() => armedFaultOf({ CONDUIT_FAULT: "explode", NODE_ENV: "test" })).toThrow(/not a fault point/);
  });
});
