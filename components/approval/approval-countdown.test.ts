import { describe, expect, it } from "vitest";
import { formatCountdown } from "./approval-countdown";

describe("formatCountdown", () => {
  it("shows minutes and seconds, hours when needed, rounded up", () => {
    expect(formatCountdown(581_000)).toBe("9:41");
    expect(formatCountdown(580_001)).toBe("9:41");
    expect(formatCountdown(5_000)).toBe("0:05");
    expect(formatCountdown(3_723_000)).toBe("1:02:03");
    expect(formatCountdown(-10)).toBe("0:00");
  });
});
