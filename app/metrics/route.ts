// The web app's Prometheus metrics, for a scraper on its loopback port (CONDUIT_NEXT_PORT). The
// edge never forwards /metrics. Next fills `x-forwarded-for` with the peer when nobody else did,
// so a request from anywhere but loopback (a web port exposed by mistake) needs the token.
import { getEnv } from "@/server/env/env";
import { metricsResponse } from "@/server/metrics/registry";
import { mayReadMetrics } from "@/server/shared/metrics-access";
import { webRegistry } from "@/server/web/web-metrics";

export const dynamic = "force-dynamic";

export async function GET(req: Request) {
  // The web app listens on 127.0.0.1 only: without the header, the peer was local.
  const peer = req.headers.get("x-forwarded-for")?.split(",")[0]?.trim() || "127.0.0.1";
  if (!mayReadMetrics({ peer, authorization: req.headers.get("authorization"), token: getEnv().CONDUIT_METRICS_TOKEN })) {
    return Response.json({ error: { code: "not_found", message: "Not found." } }, { status: 404 });
  }
  return metricsResponse(webRegistry());
}
