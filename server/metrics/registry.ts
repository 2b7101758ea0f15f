/**
 * prom-client for the Node parts (web app, sidecar): one registry per process with the default
 * process metrics (CPU, resident memory, event-loop lag, GC), and the answer to `GET /metrics`.
 * Who may read it is decided by server/shared/metrics-access (the token's holder only).
 */
import { collectDefaultMetrics, Registry } from "prom-client";

export type { Registry };

/** A registry with the default process metrics, labelled with the part's name. */
export function createPartRegistry(part: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ part });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** The registry of this process, made once (Next loads a route's modules more than once). */
export function processRegistry(part: string): Registry {
  const holder = globalThis as typeof globalThis & { __conduitMetrics?: Registry };
  holder.__conduitMetrics ??= createPartRegistry(part);
  return holder.__conduitMetrics;
}

/** The exposition as a web Response. */
export async function metricsResponse(registry: Registry, method = "GET"): Promise<Response> {
  const body = await registry.metrics();
  return new Response(method === "HEAD" ? null : body, {
    headers: { "content-type": registry.contentType, "cache-control": "no-store" },
  });
}
