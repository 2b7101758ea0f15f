/**
 * The sidecar's `/metrics`: live sessions, CLI processes and their memory, approvals pending,
 * relay latency (an event's time → its emit to the sockets), command-forwarding latency (to the
 * sidecar that runs the session, answer included), event-log write time, credential
 * proxy requests and bytes, admission refusals; plus the process defaults (server/metrics).
 * The collectors read the running parts through small functions, so the hub stays unaware.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { Counter, Gauge, Histogram } from "prom-client";
import { createPartRegistry, type Registry } from "@/server/metrics/registry";
import type { EventLogStore } from "@/server/sidecar/session/session-event-writer";
import type { Admission } from "@/server/sidecar/process/admission";
import { AppError } from "@/server/shared/errors/app-error";
import { mayReadMetrics, METRICS_PATH } from "@/server/shared/metrics-access";
import { wasVouched } from "@/server/sidecar/socket/port-gate";
import { childTrees, type ChildTree } from "./process-tree";

/** What the collectors read when scraped. */
export interface SidecarMetricsSources {
  /** Sessions holding an admission slot (a live CLI or one starting). */
  liveSessions: () => number;
  approvalsPending: () => number;
  /** Credential proxy totals since start. */
  proxyTotals: () => { requests: number; bytesUp: number; bytesDown: number; refused: number };
  /** The CLI children; default: the trees below this process in /proc. */
  cliTrees?: () => ChildTree[];
}

export interface SidecarMetrics {
  registry: Registry;
  /** Seconds from an event's time (its line arrived) to its emit to the sockets. */
  relay: Histogram;
  /** Seconds a command forwarded to another sidecar took, its answer included (by bus method). */
  forward: Histogram<"method">;
  /** The event-log store with every insert timed. */
  timedStore(store: EventLogStore): EventLogStore;
  /** The admission with every refusal counted by its reason. */
  countedAdmission(admission: Admission): Admission;
  /** Processes the kernel killed for exceeding a session's memory cap (session-cgroup.ts). */
  oomKills: Counter;
}

const RELAY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1];

export function createSidecarMetrics(sources: SidecarMetricsSources, registry: Registry = createPartRegistry("sidecar")): SidecarMetrics {
  const registers = [registry];
  const trees = sources.cliTrees ?? (() => childTrees());
  new Gauge({
    name: "conduit_sidecar_live_sessions",
    help: "Sessions holding a live CLI slot on this sidecar.",
    registers,
    collect() {
      this.set(sources.liveSessions());
    },
  });
  // One /proc walk per scrape feeds both gauges.
  let lastTrees: ChildTree[] = [];
  new Gauge({
    name: "conduit_sidecar_cli_processes",
    help: "CLI children of this sidecar (each with its sandbox and tools).",
    registers,
    collect() {
      lastTrees = trees();
      this.set(lastTrees.length);
    },
  });
  new Gauge({
    name: "conduit_sidecar_cli_rss_bytes",
    help: "Resident memory of the CLI children's process trees, summed.",
    registers,
    collect() {
      this.set(lastTrees.reduce((sum, t) => sum + t.rssBytes, 0));
    },
  });
  new Gauge({
    name: "conduit_sidecar_approvals_pending",
    help: "Permission questions waiting for a person's answer.",
    registers,
    collect() {
      this.set(sources.approvalsPending());
    },
  });
  new Gauge({
    name: "conduit_credential_proxy_requests",
    help: "Requests the credential proxy forwarded since the sidecar started.",
    registers,
    collect() {
      this.set(sources.proxyTotals().requests);
    },
  });
  new Gauge({
    name: "conduit_credential_proxy_bytes",
    help: "Bytes through the credential proxy since the sidecar started, by direction.",
    labelNames: ["direction"] as const,
    registers,
    collect() {
      const totals = sources.proxyTotals();
      this.set({ direction: "up" }, totals.bytesUp);
      this.set({ direction: "down" }, totals.bytesDown);
    },
  });
  new Gauge({
    name: "conduit_credential_proxy_refused",
    help: "Requests the credential proxy refused (no live session token) since the sidecar started.",
    registers,
    collect() {
      this.set(sources.proxyTotals().refused);
    },
  });
  const relay = new Histogram({
    name: "conduit_sidecar_relay_seconds",
    help: "From an event's time (its CLI line arrived, or the command) to its emit to the sockets.",
    buckets: RELAY_BUCKETS,
    registers,
  });
  const forward = new Histogram({
    name: "conduit_command_forward_seconds",
    help: "A session command or decision sent to the sidecar that runs the session, until its answer came back.",
    labelNames: ["method"] as const,
    buckets: RELAY_BUCKETS,
    registers,
  });
  const write = new Histogram({
    name: "conduit_sidecar_event_log_write_seconds",
    help: "Time of one event-log insert (a batch of events).",
    buckets: RELAY_BUCKETS,
    registers,
  });
  const refusals = new Counter({
    name: "conduit_sidecar_admission_refusals_total",
    help: "New CLI children refused, by reason (session_limit, low_memory).",
    labelNames: ["reason"] as const,
    registers,
  });
  const oomKills = new Counter({
    name: "conduit_sidecar_oom_kills_total",
    help: "Processes (a CLI or its tools) the kernel killed for exceeding their session's memory cap (CONDUIT_SESSION_MEMORY_MB).",
    registers,
  });
  return {
    registry,
    relay,
    forward,
    oomKills,
    timedStore: (store) => ({
      async insert(rows) {
        const end = write.startTimer();
        try {
          return await store.insert(rows);
        } finally {
          end();
        }
      },
      lastSeq: (sessionId) => store.lastSeq(sessionId),
    }),
    countedAdmission: (admission) => ({
      admit(sessionId) {
        try {
          return admission.admit(sessionId);
        } catch (err) {
          const reason = err instanceof AppError ? (err.details as { reason?: unknown } | undefined)?.reason : undefined;
          refusals.inc({ reason: typeof reason === "string" ? reason : "other" });
          throw err;
        }
      },
      get liveCount() {
        return admission.liveCount;
      },
    }),
  };
}

/**
 * The sidecar's own HTTP routes on its port, beside Socket.IO: `GET /metrics` (for the holder of
 * CONDUIT_METRICS_TOKEN only) and `GET /healthz`: `{ ok: true }` for anyone, and which sidecar
 * this is and what it runs only for a request the edge vouched for (the edge, the web app's
 * `/api/health`; socket/port-gate.ts). Returns false for anything else.
 */
export function sidecarHttpRoutes(deps: {
  metrics: SidecarMetrics;
  sidecarId: string;
  liveSessions: () => number;
  metricsToken: string | undefined;
  /** Where refusals of /metrics are logged. */
  log?: Pick<Logger, "warn">;
}): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const pathname = (req.url ?? "").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    if (pathname === "/healthz") {
      const detail = wasVouched(req) ? { sidecarId: deps.sidecarId, pid: process.pid, liveSessions: deps.liveSessions() } : {};
      res.writeHead(200, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
      res.end(JSON.stringify({ ok: true, ...detail }));
      return true;
    }
    if (pathname !== METRICS_PATH) return false;
    if (!mayReadMetrics({ authorization: req.headers.authorization, token: deps.metricsToken })) {
      deps.log?.warn({ path: pathname, reason: deps.metricsToken ? "no valid bearer token" : "CONDUIT_METRICS_TOKEN is not set" }, "metrics refused");
      return false;
    }
    deps.metrics.registry.metrics().then(
      (text) => {
        res.writeHead(200, { "content-type": deps.metrics.registry.contentType, "cache-control": "no-store" });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (err: unknown) => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: "internal", message: err instanceof Error ? err.message : String(err) } }));
      },
    );
    return true;
  };
}
