import { describe, expect, it } from "vitest";
import { parsePrometheus } from "@/test/prometheus-text";
import { observeRouteHandler, webRegistry } from "./web-metrics";

describe("web metrics", () => {
  it("counts route handler answers by status class, beside the process defaults, in one registry", async () => {
    observeRouteHandler(200, 0.004);
    observeRouteHandler(201, 0.03);
    observeRouteHandler(404, 0.002);
    expect(webRegistry()).toBe(webRegistry());
    const samples = parsePrometheus(await webRegistry().metrics());
    expect(samples.get('conduit_web_route_handler_seconds_count{part="web",status="2xx"}')).toBe(2);
    expect(samples.get('conduit_web_route_handler_seconds_bucket{le="0.005",part="web",status="2xx"}')).toBe(1);
    expect(samples.get('conduit_web_route_handler_seconds_count{part="web",status="4xx"}')).toBe(1);
    expect(samples.has('process_resident_memory_bytes{part="web"}')).toBe(true);
  });
});
