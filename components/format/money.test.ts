import { describe, expect, it } from "vitest";
import { formatCompactCount, formatCount, formatUsd } from "./money";

describe("formatUsd", () => {
  it("shows cents from a dollar up, with grouping", () => {
    expect(formatUsd(1)).toBe("$1.00");
    expect(formatUsd(12.5)).toBe("$12.50");
    expect(formatUsd(1234.567)).toBe("$1,234.57");
    expect(formatUsd(250_000)).toBe("$250,000.00");
  });

  it("keeps up to four decimals below a dollar, never fewer than two", () => {
    expect(formatUsd(0.0646)).toBe("$0.0646");
    expect(formatUsd(0.5)).toBe("$0.50");
    expect(formatUsd(0.0008)).toBe("$0.0008");
    expect(formatUsd(0.12345)).toBe("$0.1235");
    expect(formatUsd(0.99999)).toBe("$1.00");
  });

  it("says zero plainly and marks amounts too small to show", () => {
    expect(formatUsd(0)).toBe("$0.00");
    expect(formatUsd(Number.NaN)).toBe("$0.00");
    expect(formatUsd(Number.POSITIVE_INFINITY)).toBe("$0.00");
    expect(formatUsd(0.00001)).toBe("<$0.0001");
  });

  it("formats refunds and corrections with a minus sign", () => {
    expect(formatUsd(-2)).toBe("-$2.00");
    expect(formatUsd(-0.25)).toBe("-$0.25");
  });
});

describe("formatCount", () => {
  it("groups thousands and rounds to whole numbers", () => {
    expect(formatCount(0)).toBe("0");
    expect(formatCount(12345)).toBe("12,345");
    expect(formatCount(1_234_567.6)).toBe("1,234,568");
    expect(formatCount(Number.NaN)).toBe("0");
  });

  it("has a compact form for tight spaces", () => {
    expect(formatCompactCount(950)).toBe("950");
    expect(formatCompactCount(12_345)).toBe("12.3K");
    expect(formatCompactCount(4_100_000)).toBe("4.1M");
  });
});
