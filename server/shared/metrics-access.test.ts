import { describe, expect, it } from "vitest";
import { isMetricsPath, mayReadMetrics, presentsMetricsToken } from "./metrics-access";

describe("metrics access", () => {
  it("knows the path and what is under it", () => {
    expect(isMetricsPath("/metrics")).toBe(true);
    expect(isMetricsPath("/metrics/x")).toBe(true);
    expect(isMetricsPath("/metricsx")).toBe(false);
    expect(isMetricsPath("/api/metrics")).toBe(false);
  });

  it("accepts the bearer token only when one is configured and it matches", () => {
    const token = "t".repeat(20);
    expect(presentsMetricsToken(`Bearer ${token}`, token)).toBe(true);
    expect(presentsMetricsToken(`bearer ${token}`, token)).toBe(true);
    expect(presentsMetricsToken(`Bearer ${token}x`, token)).toBe(false);
    expect(presentsMetricsToken(`Bearer ${token.slice(1)}`, token)).toBe(false);
    expect(presentsMetricsToken(token, token)).toBe(false);
    expect(presentsMetricsToken("Bearer ", undefined)).toBe(false);
    expect(presentsMetricsToken(null, token)).toBe(false);
  });

  it("lets in the token's holder only: no token configured, nobody", () => {
    expect(mayReadMetrics({ authorization: null, token: undefined })).toBe(false);
    expect(mayReadMetrics({ authorization: "Bearer anything-at-all-here", token: undefined })).toBe(false);
    expect(mayReadMetrics({ authorization: null, token: "x".repeat(16) })).toBe(false);
    expect(mayReadMetrics({ authorization: `Bearer ${"x".repeat(16)}`, token: "x".repeat(16) })).toBe(true);
  });
});
