/**
 * `npm start` heals: a part killed with SIGKILL after the group is up is started again (the
 * sidecar then adopts what its predecessor left, as after any restart), and the app answers
 * again; a part that keeps dying is a crash loop, reported with its last stderr lines, and ends
 * the group with the failure line and exit 1. Real processes: the built app, the real sidecar.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts, groupAlive } from "../e2e/support/fresh-clone";
import { deriveEdgeVouch, EDGE_VOUCH_HEADER } from "../server/shared/edge-vouch";
import { parsePrometheus, samplesOf } from "../test/prometheus-text";

const root = path.resolve(import.meta.dirname, "..");
const dataDir = mkdtempSync(path.join(os.tmpdir(), "conduit-heal-"));
const secret = "heal-secret-".padEnd(40, "x");
const metricsToken = "heal-metrics-token-0123456789";

let child: ChildProcess;
let output = "";
let exited: Promise<number | null>;
let ports: { edge: number; web: number; sidecar: number; model: number };

/** Resolves with the first match of `pattern` in the output from `from` on. */
async function waitFor(pattern: RegExp, timeoutMs: number, from = 0): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(output.slice(from));
    if (match) return match;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${output.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function health(): Promise<{ status: number; body: unknown }> {
  try {
    const res = await fetch(`http://127.0.0.1:${ports.edge}/api/health`, { signal: AbortSignal.timeout(5000) });
    return { status: res.status, body: await res.json() };
  } catch (err) {
    return { status: 0, body: String(err) };
  }
}

beforeAll(async () => {
  const [edge, web, sidecar, model] = await freePorts(4);
  ports = { edge: edge!, web: web!, sidecar: sidecar!, model: model! };
  child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: os.homedir(),
      CONDUIT_DATA_DIR: dataDir,
      PORT: String(edge),
      CONDUIT_NEXT_PORT: String(web),
      CONDUIT_SIDECAR_PORT: String(sidecar),
      CONDUIT_MODEL_PORT: String(model),
      NEXTAUTH_SECRET: secret,
      CONDUIT_METRICS_TOKEN: metricsToken,
    } as Record<string, string> as NodeJS.ProcessEnv,
  });
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  // the first start may build the app
  await waitFor(/\[conduit\] ready in /, 590_000);
}, 600_000);

afterAll(async () => {
  if (child.exitCode === null && groupAlive(child.pid!)) {
    process.kill(-child.pid!, "SIGINT");
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

const sidecarPid = (text: string) => Number([...text.matchAll(/\[conduit\] sidecar up(?: again)? \([\d.]+ s, pid (\d+)\)/g)].at(-1)![1]);

describe("each part's /metrics", () => {
  it("is served on each part's port in Prometheus text to the token's holder; without it, 404 from loopback too", async () => {
    const bearer = { authorization: `Bearer ${metricsToken}` };
    const text = async (url: string, headers: Record<string, string> = bearer) => {
      const res = await fetch(url, { headers });
      return { status: res.status, samples: parsePrometheus(await res.text()) };
    };
    const edge = await text(`http://127.0.0.1:${ports.edge}/metrics`);
    expect(edge.status).toBe(200);
    expect(samplesOf(edge.samples, "conduit_edge_requests_total").length).toBeGreaterThan(0);
    const web = await text(`http://127.0.0.1:${ports.web}/metrics`);
    expect(web.status).toBe(200);
    expect(web.samples.get('process_resident_memory_bytes{part="web"}')).toBeGreaterThan(0);
    const sidecar = await text(`http://127.0.0.1:${ports.sidecar}/metrics`);
    expect(sidecar.status).toBe(200);
    expect(sidecar.samples.get('conduit_sidecar_live_sessions{part="sidecar"}')).toBe(0);
    expect(sidecar.samples.has('conduit_credential_proxy_requests{part="sidecar"}')).toBe(true);
    // a local peer is not trusted for being local (a session on this machine is local too)
    for (const port of [ports.edge, ports.web, ports.sidecar]) {
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status, String(port)).toBe(404);
    }
  }, 30_000);
});

describe("the internal ports", () => {
  it("answer 403 to a request that did not come through the edge: pages, the API, Socket.IO", async () => {
    for (const url of [
      `http://127.0.0.1:${ports.web}/`,
      `http://127.0.0.1:${ports.web}/api/health`,
      `http://127.0.0.1:${ports.web}/api/auth/csrf`,
      `http://127.0.0.1:${ports.sidecar}/socket.io/?EIO=4&transport=polling`,
    ]) {
      const res = await fetch(url, { headers: { origin: `http://127.0.0.1:${ports.edge}` } });
      expect(res.status, url).toBe(403);
    }
    const signup = await fetch(`http://127.0.0.1:${ports.web}/api/signup`, {
      method: "POST",
      headers: { origin: `http://127.0.0.1:${ports.edge}`, "content-type": "application/json" },
      body: JSON.stringify({ email: "owner@example.test", name: "Owner", password: "correct horse battery staple" }),
    });
    expect(signup.status).toBe(403);
    // the same through the edge is answered (no account made here: a GET)
    expect((await fetch(`http://127.0.0.1:${ports.edge}/api/health`)).status).toBe(200);
  }, 30_000);
});

describe("npm start heals", () => {
  it("restarts a sidecar killed with SIGKILL and serves again, naming the live sidecar in /api/health", async () => {
    expect((await health()).status).toBe(200);
    const before = output.length;
    const pid = sidecarPid(output);
    process.kill(pid, "SIGKILL");
    await waitFor(/\[conduit\] sidecar stopped unexpectedly \(SIGKILL\)(: .*)?; restarting in 0\.5 s/, 10_000, before);
    await waitFor(/\[conduit\] sidecar up again \([\d.]+ s, pid \d+\)/, 60_000, before);
    expect(sidecarPid(output)).not.toBe(pid);
    const vouch = { [EDGE_VOUCH_HEADER]: await deriveEdgeVouch(secret) };
    // a socket handshake as the edge forwards it reaches the new sidecar (it refuses us: no session cookie)
    const handshake = await fetch(`http://127.0.0.1:${ports.sidecar}/socket.io/?EIO=4&transport=polling`, { headers: vouch });
    expect(handshake.status).toBeLessThan(500);
    const { status, body } = await health();
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ ok: true, sidecar: { alive: true, liveSessions: 0 } });
    // the sidecar answering is the new one (its own /healthz names its pid to a vouched request)
    const own = (await (await fetch(`http://127.0.0.1:${ports.sidecar}/healthz`, { headers: vouch })).json()) as { pid: number; sidecarId: string };
    expect(own.pid).toBe(sidecarPid(output));
    expect((body as { sidecar: { id: string } }).sidecar.id).toBe(own.sidecarId);
    expect(child.exitCode).toBeNull();
  }, 90_000);

  it("ends the group with a crash-loop line and exit 1 when a part keeps dying", async () => {
    const from = output.length;
    // the demo model: it restarts fastest; kill each new one as soon as it is up
    const killed = new Set<number>();
    const modelPids = () => [...output.slice(from).matchAll(/\[conduit\] model up(?: again)? \([\d.]+ s, pid (\d+)\)/g)].map((m) => Number(m[1]));
    const first = Number(/\[conduit\] model up \([\d.]+ s, pid (\d+)\)/.exec(output)![1]);
    process.kill(first, "SIGKILL");
    killed.add(first);
    const deadline = Date.now() + 80_000;
    while (child.exitCode === null && Date.now() < deadline) {
      for (const pid of modelPids()) {
        if (killed.has(pid)) continue;
        killed.add(pid);
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await exited).toBe(1);
    const tail = output.slice(from);
    expect(tail).toMatch(/\[conduit\] model is in a crash loop \(6 crashes within 60 s\); its last stderr lines:/);
    expect(output.trim().split("\n").pop()).toMatch(/^\[conduit\] failed: model — crash loop: 6 crashes within 60 s, the last \(SIGKILL\)/);
  }, 90_000);
});
