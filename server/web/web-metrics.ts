/**
 * The web app's `/metrics`: the process defaults (server/metrics) and the route handlers' count
 * and latency by status class (timed in server/web/http.ts's `handle`). Pages are counted by the
 * edge (`conduit_edge_requests_total{upstream="web"}`).
 */
import { Histogram } from "prom-client";
import { processRegistry, type Registry } from "@/server/metrics/registry";

const NAME = "conduit_web_route_handler_seconds";

export function webRegistry(): Registry {
  return processRegistry("web");
}

function handlerHistogram(): Histogram<"status"> {
  const registry = webRegistry();
  const known = registry.getSingleMetric(NAME) as Histogram<"status"> | undefined;
  return (
    known ??
    new Histogram({
      name: NAME,
      help: "Route handler time to its response, by status class.",
      labelNames: ["status"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    })
  );
}

/** Records one route handler answer. */
export function observeRouteHandler(status: number, seconds: number): void {
  handlerHistogram().observe({ status: `${Math.floor(status / 100)}xx` }, seconds);
}
