// The web app's Prometheus metrics, for a scraper on its loopback port (CONDUIT_NEXT_PORT). The
// edge never forwards /metrics; a request that came through a proxy anyway needs the token.
import { getEnv } from "@/server/env/env";
import { metricsResponse } from "@/server/metrics/registry";
import { presentsMetricsToken } from "@/server/shared/metrics-access";
import { webRegistry } from "@/server/web/web-metrics";

export const dynamic = "force-dynamic";

export async function GET(req: Request) {
  const proxied = req.headers.has("x-forwarded-host") || req.headers.has("x-forwarded-for");
  if (proxied && !presentsMetricsToken(req.headers.get("authorization"), getEnv().CONDUIT_METRICS_TOKEN)) {
    return Response.json({ error: { code: "not_found", message: "Not found." } }, { status: 404 });
  }
  return metricsResponse(webRegistry());
}
