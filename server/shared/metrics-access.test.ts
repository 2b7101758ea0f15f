import { describe, expect, it } from "vitest";
import { isLoopbackAddress, isMetricsPath, mayReadMetrics, presentsMetricsToken } from "./metrics-access";

describe("metrics access", () => {
  it("knows the path and what is under it", () => {
    expect(isMetricsPath("/metrics")).toBe(true);
    expect(isMetricsPath("/metrics/x")).toBe(true);
    expect(isMetricsPath("/metricsx")).toBe(false);
    expect(isMetricsPath("/api/metrics")).toBe(false);
  });

  it("tells loopback peers", () => {
    for (const ip of ["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"]) expect(isLoopbackAddress(ip), ip).toBe(true);
    for (const ip of ["10.0.0.1", "::ffff:10.0.0.1", "", undefined, "128.0.0.1", "fe80::1"]) expect(isLoopbackAddress(ip), String(ip)).toBe(false);
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

  it("lets loopback in always and others with the token", () => {
    expect(mayReadMetrics({ peer: "127.0.0.1", authorization: null, token: undefined })).toBe(true);
    expect(mayReadMetrics({ peer: "10.1.1.1", authorization: null, token: "x".repeat(16) })).toBe(false);
    expect(mayReadMetrics({ peer: "10.1.1.1", authorization: `Bearer ${"x".repeat(16)}`, token: "x".repeat(16) })).toBe(true);
  });
});
