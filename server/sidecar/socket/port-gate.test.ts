import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { createSidecarMetrics, sidecarHttpRoutes } from "@/server/sidecar/metrics/sidecar-metrics";
import { gatePort } from "./port-gate";

const VOUCH = "v".repeat(43);

/** The sidecar's own routes behind the gate, as createSocketServer puts them (without Socket.IO). */
async function gatedServer() {
  const metrics = createSidecarMetrics({
    liveSessions: () => 3,
    approvalsPending: () => 0,
    proxyTotals: () => ({ requests: 0, bytesUp: 0, bytesDown: 0, refused: 0 }),
    cliTrees: () => [],
  });
  const routes = sidecarHttpRoutes({ metrics, sidecarId: "sidecar-a", liveSessions: () => 3, metricsToken: undefined });
  const upgrades: string[] = [];
  const server = createServer((req, res) => {
    if (routes(req, res)) return;
    res.writeHead(404);
    res.end();
  });
  server.on("upgrade", (req, socket) => {
    upgrades.push(req.url ?? "");
    socket.end("HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: echo\r\n\r\n");
  });
  gatePort(server, () => VOUCH, pino({ level: "silent" }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { port, base: `http://127.0.0.1:${port}`, upgrades, close: () => new Promise((r) => server.close(r)) };
}

function upgrade(port: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path: "/socket.io/?EIO=4&transport=websocket", headers: { connection: "Upgrade", upgrade: "websocket", ...headers } });
    req.on("upgrade", (_res, socket) => {
      socket.destroy();
      resolve(101);
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the sidecar's port gate", () => {
  it("answers 403 to every request and upgrade without the edge's vouch, and lets vouched ones through", async () => {
    const gated = await gatedServer();
    try {
      for (const headers of [{}, { "x-conduit-edge": "forged" }, { "x-conduit-edge": `${VOUCH}x` }] as Record<string, string>[]) {
        const res = await fetch(`${gated.base}/socket.io/?EIO=4&transport=polling`, { headers });
        expect(res.status).toBe(403);
        expect(await res.json()).toMatchObject({ error: { code: "forbidden" } });
        expect((await fetch(`${gated.base}/other`, { headers })).status).toBe(403);
        expect(await upgrade(gated.port, headers)).toBe(403);
      }
      expect(gated.upgrades).toEqual([]);
      expect((await fetch(`${gated.base}/other`, { headers: { "x-conduit-edge": VOUCH } })).status).toBe(404);
      expect(await upgrade(gated.port, { "x-conduit-edge": VOUCH })).toBe(101);
      expect(gated.upgrades).toHaveLength(1);
    } finally {
      await gated.close();
    }
  });

  it("answers /healthz to anyone, naming the sidecar and what it runs only to a vouched request; /metrics asks its token", async () => {
    const gated = await gatedServer();
    try {
      expect(await (await fetch(`${gated.base}/healthz`)).json()).toEqual({ ok: true });
      const vouched = await (await fetch(`${gated.base}/healthz`, { headers: { "x-conduit-edge": VOUCH } })).json();
      expect(vouched).toMatchObject({ ok: true, sidecarId: "sidecar-a", liveSessions: 3, pid: process.pid });
      // no token configured: nobody reads /metrics, vouched or not
      expect((await fetch(`${gated.base}/metrics`)).status).toBe(404);
      expect((await fetch(`${gated.base}/metrics`, { headers: { "x-conduit-edge": VOUCH } })).status).toBe(404);
    } finally {
      await gated.close();
    }
  });
});
