/**
 * The edge's Deno entry, run by the real Deno (the pinned `deno` npm package): it reads the same
 * configuration as every other part (server/env, with its defaults), so it starts with nothing
 * but PORT set and refuses a bad value naming it.
 */
import { spawn, spawnSync } from "node:child_process";
import { createServer, request as httpRequest, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { freePorts } from "../../e2e/support/fresh-clone";

const root = path.resolve(import.meta.dirname, "..", "..");
const deno = path.join(root, "node_modules", ".bin", "deno");
const args = ["run", "--node-modules-dir=manual", "--unstable-sloppy-imports", "--allow-net", "--allow-env", "--allow-read", "server/edge-proxy/deno.ts"];

function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", ...extra } as Record<string, string> as NodeJS.ProcessEnv;
}

describe("the edge under Deno", () => {
  it("starts with only PORT set and answers its health check", async () => {
    const [port] = await freePorts(1);
    const child = spawn(deno, args, { cwd: root, env: baseEnv({ PORT: String(port) }), stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    try {
      const deadline = Date.now() + 50_000;
      let status = 0;
      while (Date.now() < deadline && child.exitCode === null) {
        status = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => 0);
        if (status === 200) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(status, output).toBe(200);
    } finally {
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    }
  }, 60_000);

  it("compresses Next's scripts with br (Deno's CompressionStream has it), else gzip; refuses another Host with 421", async () => {
    const script = `console.log(${JSON.stringify("y".repeat(40_000))});\n`;
    const next = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/javascript", "content-length": Buffer.byteLength(script) });
      res.end(script);
    });
    await new Promise<void>((resolve) => next.listen(0, "127.0.0.1", resolve));
    const [port] = await freePorts(1);
    const env = baseEnv({ PORT: String(port), CONDUIT_NEXT_PORT: String((next.address() as AddressInfo).port) });
    const child = spawn(deno, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const get = (acceptEncoding: string, extra: Record<string, string> = {}) =>
      new Promise<{ status: number; headers: IncomingMessage["headers"]; body: Buffer }>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, path: "/_next/static/x.js", headers: { "accept-encoding": acceptEncoding, ...extra } }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        });
        req.on("error", reject);
        req.end();
      });
    try {
      const deadline = Date.now() + 50_000;
      while (Date.now() < deadline && child.exitCode === null) {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => 0)) === 200) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const br = await get("gzip, deflate, br");
      expect(br.headers["content-encoding"], output).toBe("br");
      expect(brotliDecompressSync(br.body).toString()).toBe(script);
      const gzip = await get("gzip");
      expect(gzip.headers["content-encoding"]).toBe("gzip");
      expect(gunzipSync(gzip.body).toString()).toBe(script);
      // a DNS-rebinding page's name: refused, on a plain request and on a WebSocket upgrade
      const evil = await get("gzip", { host: `evil.example:${port}` });
      expect(evil.status).toBe(421);
      expect(evil.body.toString()).toMatch(/^421 Misdirected Request/);
      const upgrade = await get("gzip", {
        host: `evil.example:${port}`,
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        cookie: "next-auth.session-token=x",
      });
      expect(upgrade.status).toBe(421);
    } finally {
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
      await new Promise((r) => next.close(r));
    }
  }, 60_000);

  it("refuses a bad setting, naming it", () => {
    const result = spawnSync(deno, args, { cwd: root, env: baseEnv({ PORT: "not-a-port" }), encoding: "utf8", timeout: 50_000 });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/edge: Invalid configuration:[\s\S]*PORT/);
  }, 60_000);
});
