// The web app's Prometheus metrics, for a scraper on its port (CONDUIT_NEXT_PORT) presenting
// `Authorization: Bearer <CONDUIT_METRICS_TOKEN>`; without a token set, nobody reads them. The
// edge never forwards /metrics, and a local peer is not trusted for being local (a session on
// this machine is local too). proxy.ts lets /metrics through without the edge's vouch for this.
import { getEnv } from "@/server/env/env";
import { metricsResponse } from "@/server/metrics/registry";
import { mayReadMetrics } from "@/server/shared/metrics-access";
import { logger } from "@/server/web/logger";
import { webRegistry } from "@/server/web/web-metrics";

export const dynamic = "force-dynamic";

export async function GET(req: Request) {
  const token = getEnv().CONDUIT_METRICS_TOKEN;
  if (!mayReadMetrics({ authorization: req.headers.get("authorization"), token })) {
    logger.warn({ path: "/metrics", reason: token ? "no valid bearer token" : "CONDUIT_METRICS_TOKEN is not set" }, "metrics refused");
    return Response.json({ error: { code: "not_found", message: "Not found." } }, { status: 404 });
  }
  return metricsResponse(webRegistry());
}
