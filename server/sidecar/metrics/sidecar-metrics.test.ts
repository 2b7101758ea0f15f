import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { parsePrometheus, samplesOf } from "@/test/prometheus-text";
import { createAdmission } from "@/server/sidecar/process/admission";
import { childTrees } from "./process-tree";
import { createSidecarMetrics, sidecarHttpRoutes } from "./sidecar-metrics";

function fixture() {
  const totals = { requests: 3, bytesUp: 1200, bytesDown: 5400, refused: 1 };
  return createSidecarMetrics({
    liveSessions: () => 2,
    approvalsPending: () => 4,
    proxyTotals: () => totals,
    cliTrees: () => [
      { pid: 10, processes: 3, rssBytes: 200_000_000 },
      { pid: 11, processes: 2, rssBytes: 150_000_000 },
    ],
  });
}

describe("sidecar metrics", () => {
  it("reports sessions, CLI processes and memory, approvals and the credential proxy", async () => {
    const metrics = fixture();
    const samples = parsePrometheus(await metrics.registry.metrics());
    expect(samples.get('conduit_sidecar_live_sessions{part="sidecar"}')).toBe(2);
    expect(samples.get('conduit_sidecar_cli_processes{part="sidecar"}')).toBe(2);
    expect(samples.get('conduit_sidecar_cli_rss_bytes{part="sidecar"}')).toBe(350_000_000);
    expect(samples.get('conduit_sidecar_approvals_pending{part="sidecar"}')).toBe(4);
    expect(samples.get('conduit_credential_proxy_requests{part="sidecar"}')).toBe(3);
    expect(samples.get('conduit_credential_proxy_bytes{direction="up",part="sidecar"}')).toBe(1200);
    expect(samples.get('conduit_credential_proxy_bytes{direction="down",part="sidecar"}')).toBe(5400);
    expect(samples.get('conduit_credential_proxy_refused{part="sidecar"}')).toBe(1);
    // the process defaults come along
    expect(samplesOf(samples, "process_resident_memory_bytes").length).toBe(1);
  });

  it("counts OOM kills at the sessions' memory caps", async () => {
    const metrics = fixture();
    expect(parsePrometheus(await metrics.registry.metrics()).get('conduit_sidecar_oom_kills_total{part="sidecar"}')).toBe(0);
    metrics.oomKills.inc(2);
    expect(parsePrometheus(await metrics.registry.metrics()).get('conduit_sidecar_oom_kills_total{part="sidecar"}')).toBe(2);
  });

  it("times relays, forwarded commands and event-log writes, and counts admission refusals by reason", async () => {
    const metrics = fixture();
    metrics.relay.observe(0.003);
    metrics.relay.observe(0.2);
    metrics.forward.observe({ method: "session.prompt" }, 0.0015);
    const inserted: unknown[] = [];
    const store = metrics.timedStore({
      insert: async (rows) => {
        inserted.push(...rows);
        return [];
      },
      lastSeq: async () => 7,
    });
    await store.insert([]);
    expect(await store.lastSeq("s")).toBe(7);
    const admission = metrics.countedAdmission(createAdmission({ maxLive: 1, minFreeBytes: 0, freeMemory: () => 1 }));
    admission.admit("a");
    expect(() => admission.admit("b")).toThrow(/its limit/);
    expect(admission.liveCount).toBe(1);
    const samples = parsePrometheus(await metrics.registry.metrics());
    expect(samples.get('conduit_sidecar_relay_seconds_count{part="sidecar"}')).toBe(2);
    expect(samples.get('conduit_sidecar_relay_seconds_bucket{le="0.005",part="sidecar"}')).toBe(1);
    expect(samples.get('conduit_sidecar_event_log_write_seconds_count{part="sidecar"}')).toBe(1);
    expect(samples.get('conduit_command_forward_seconds_bucket{le="0.0025",method="session.prompt",part="sidecar"}')).toBe(1);
    expect(samples.get('conduit_sidecar_admission_refusals_total{part="sidecar",reason="session_limit"}')).toBe(1);
  });

  it("serves /metrics to the token's holder only and /healthz (details with the edge's vouch), nothing else", async () => {
    const metrics = fixture();
    const token = "metrics-token-0123456789";
    const warned: unknown[] = [];
    const routes = sidecarHttpRoutes({ metrics, sidecarId: "sidecar-a", liveSessions: () => 2, metricsToken: token, log: { warn: (o: unknown) => void warned.push(o) } as never });
    const server = createServer((req, res) => {
      if (routes(req, res)) return;
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
      expect(parsePrometheus(text).get('conduit_sidecar_live_sessions{part="sidecar"}')).toBe(2);
      // a loopback peer is not trusted for being local: without the token, the 404
      expect((await fetch(`${base}/metrics`)).status).toBe(404);
      expect((await fetch(`${base}/metrics`, { headers: { authorization: "Bearer wrong-wrong-wrong-wrong" } })).status).toBe(404);
      expect(warned).toHaveLength(2);
      // not vouched for (no gate in front of this bare server): nothing but "up"
      expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ ok: true });
      expect((await fetch(`${base}/other`)).status).toBe(404);
      expect((await fetch(`${base}/metrics`, { method: "POST" })).status).toBe(404);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe("childTrees", () => {
  it("finds a child process tree of this process with its resident memory", async () => {
    // a shell that runs a grandchild: one tree of two processes
    const child = spawn("sh", ["-c", "sleep 30 & wait"], { stdio: "ignore", detached: true });
    try {
      let tree;
      for (let i = 0; i < 50 && !(tree?.processes === 2); i++) {
        tree = childTrees(process.pid).find((t) => t.pid === child.pid);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(tree?.processes).toBe(2);
      expect(tree!.rssBytes).toBeGreaterThan(100_000);
    } finally {
      process.kill(-child.pid!, "SIGKILL");
    }
  });

  it("counts the spawn helper's children as CLIs and leaves the helpers out", () => {
    // a /proc of its own: 10 is the sidecar; 20 its spawn helper, 30 its exec helper (running git
    // as 31); 21 and 22 CLIs from the helper (22 with a tool as 23); 40 a CLI the sidecar spawned itself
    const proc = mkdtempSync(path.join(os.tmpdir(), "conduit-proc-"));
    const parents: Record<number, number> = { 10: 1, 20: 10, 21: 20, 22: 20, 23: 22, 30: 10, 31: 30, 40: 10 };
    for (const [pid, ppid] of Object.entries(parents)) {
      mkdirSync(path.join(proc, pid));
      writeFileSync(path.join(proc, pid, "stat"), `${pid} (node (x)) S ${ppid} ${pid} ${pid} 0`);
      writeFileSync(path.join(proc, pid, "status"), `Name:\tnode\nVmRSS:\t    ${pid} kB\n`);
    }
    try {
      const trees = childTrees(10, proc, { spawner: 20, others: [30] });
      expect(trees.map((t) => [t.pid, t.processes, t.rssBytes]).sort((a, b) => a[0]! - b[0]!)).toEqual([
        [21, 1, 21 * 1024],
        [22, 2, (22 + 23) * 1024],
        [40, 1, 40 * 1024],
      ]);
      // without the helpers named, every direct child counts, as before
      expect(childTrees(10, proc).map((t) => t.pid).sort()).toEqual([20, 30, 40]);
    } finally {
      rmSync(proc, { recursive: true, force: true });
    }
  });

  it("finds nothing where there is no /proc", () => {
    expect(childTrees(1, "/nonexistent-proc")).toEqual([]);
  });
});
