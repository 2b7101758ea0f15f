/**
 * The edge's Deno entry, run by the real Deno (the pinned `deno` npm package): it reads the same
 * configuration as every other part (server/env, with its defaults), so it starts with nothing
 * but PORT set and refuses a bad value naming it.
 */
import { spawn, spawnSync } from "node:child_process";
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

  it("refuses a bad setting, naming it", () => {
    const result = spawnSync(deno, args, { cwd: root, env: baseEnv({ PORT: "not-a-port" }), encoding: "utf8", timeout: 50_000 });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/edge: Invalid configuration:[\s\S]*PORT/);
  }, 60_000);
});
