// Web-standard only: the edge's request counts and latency in the Prometheus text format, without
// prom-client (a Node module), so Deno serves the same numbers.

/** Seconds: from 5 ms to 10 s, the range a proxied page or API answer falls in. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** Who answered: the web app, the sidecar, or the edge itself (health, refusals, metrics). */
export type MetricsUpstream = "web" | "sidecar" | "edge";

interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

export interface EdgeMetrics {
  /** One HTTP request answered, with the time to its response headers. */
  observe(upstream: MetricsUpstream, status: number, seconds: number): void;
  /** One WebSocket upgrade, admitted or refused. */
  upgrade(upstream: MetricsUpstream, admitted: boolean): void;
  /** The Prometheus text exposition (version 0.0.4). */
  render(): string;
}

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const statusClass = (status: number) => `${Math.floor(status / 100)}xx`;
const labels = (pairs: Record<string, string>) =>
  `{${Object.entries(pairs)
    .map(([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`)
    .join(",")}}`;

export function createEdgeMetrics(): EdgeMetrics {
  const requests = new Map<string, { upstream: string; status: string; value: number }>();
  const latency = new Map<string, Histogram>();
  const upgrades = new Map<string, { upstream: string; result: string; value: number }>();
  return {
    observe(upstream, status, seconds) {
      const cls = statusClass(status);
      const key = `${upstream} ${cls}`;
      const counter = requests.get(key) ?? { upstream, status: cls, value: 0 };
      counter.value += 1;
      requests.set(key, counter);
      let h = latency.get(upstream);
      if (!h) {
        h = { counts: LATENCY_BUCKETS.map(() => 0), sum: 0, count: 0 };
        latency.set(upstream, h);
      }
      LATENCY_BUCKETS.forEach((le, i) => {
        if (seconds <= le) h.counts[i]! += 1;
      });
      h.sum += seconds;
      h.count += 1;
    },
    upgrade(upstream, admitted) {
      const result = admitted ? "admitted" : "refused";
      const key = `${upstream} ${result}`;
      const counter = upgrades.get(key) ?? { upstream, result, value: 0 };
      counter.value += 1;
      upgrades.set(key, counter);
    },
    render() {
      const out: string[] = [
        "# HELP conduit_edge_requests_total HTTP requests the edge answered, by upstream and status class.",
        "# TYPE conduit_edge_requests_total counter",
      ];
      for (const c of requests.values()) out.push(`conduit_edge_requests_total${labels({ upstream: c.upstream, status: c.status })} ${c.value}`);
      out.push(
        "# HELP conduit_edge_request_duration_seconds Time from a request's arrival to its response headers, by upstream.",
        "# TYPE conduit_edge_request_duration_seconds histogram",
      );
      for (const [upstream, h] of latency) {
        LATENCY_BUCKETS.forEach((le, i) =>
          out.push(`conduit_edge_request_duration_seconds_bucket${labels({ upstream, le: String(le) })} ${h.counts[i]}`),
        );
        out.push(`conduit_edge_request_duration_seconds_bucket${labels({ upstream, le: "+Inf" })} ${h.count}`);
        out.push(`conduit_edge_request_duration_seconds_sum${labels({ upstream })} ${h.sum}`);
        out.push(`conduit_edge_request_duration_seconds_count${labels({ upstream })} ${h.count}`);
      }
      out.push("# HELP conduit_edge_upgrades_total WebSocket upgrades, admitted or refused.", "# TYPE conduit_edge_upgrades_total counter");
      for (const c of upgrades.values()) out.push(`conduit_edge_upgrades_total${labels({ upstream: c.upstream, result: c.result })} ${c.value}`);
      return `${out.join("\n")}\n`;
    },
  };
}

/** `conduit_edge_sidecar_up`: 1 for each sidecar in the rotation, 0 for one taken out by its health checks. */
export function renderSidecarHealth(sidecars: readonly { origin: string; healthy: boolean }[]): string {
  const out = [
    "# HELP conduit_edge_sidecar_up Whether the edge sends new connections to a sidecar (1) or took it out after failed health checks (0).",
    "# TYPE conduit_edge_sidecar_up gauge",
  ];
  for (const s of sidecars) out.push(`conduit_edge_sidecar_up${labels({ sidecar: s.origin })} ${s.healthy ? 1 : 0}`);
  return `${out.join("\n")}\n`;
}
