/**
 * `npm start`'s failures a newcomer meets first: a bad setting and a port already taken. Each
 * ends with one line naming the part and the cause, and a non-zero exit, before anything is
 * built or started.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePorts } from "../e2e/support/fresh-clone";

const root = path.resolve(import.meta.dirname, "..");
const dataDir = mkdtempSync(path.join(os.tmpdir(), "conduit-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function start(env: Record<string, string>, args: string[] = []): { status: number | null; out: string } {
  const result = spawnSync(process.execPath, ["--import", "tsx", "scripts/start.ts", ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: os.homedir(), CONDUIT_DATA_DIR: dataDir, ...env } as Record<string, string> as NodeJS.ProcessEnv,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

describe("npm start refuses to start, naming why", () => {
  it("names a bad setting", () => {
    const { status, out } = start({ CONDUIT_SIGNUP: "everyone", PORT: "http" });
    expect(status).toBe(1);
    const last = out.trim().split("\n").pop();
    expect(last).toMatch(/^\[conduit\] failed: configuration — Invalid configuration: .*PORT.*CONDUIT_SIGNUP/);
  });

  it("names the part whose port is taken and the variable that moves it", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      // the other ports: whatever the kernel says is free now (3000 may be taken on this machine)
      const [edge, web, model] = await freePorts(3);
      const { status, out } = start({ CONDUIT_SIDECAR_PORT: String(port), PORT: String(edge), CONDUIT_NEXT_PORT: String(web), CONDUIT_MODEL_PORT: String(model) });
      expect(status).toBe(1);
      expect(out.trim().split("\n").pop()).toBe(
        `[conduit] failed: sidecar — port ${port} on 127.0.0.1 (CONDUIT_SIDECAR_PORT) is already in use by another program; stop that program or set CONDUIT_SIDECAR_PORT to another port`,
      );
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });

  it("names what a lone part lacks, before binding or starting anything", () => {
    const { status, out } = start({}, ["--only", "edge"]);
    expect(status).toBe(1);
    const last = out.trim().split("\n").pop();
    expect(last).toMatch(/^\[conduit\] failed: configuration — --only edge: NEXTAUTH_SECRET is required with --only.*; CONDUIT_WEB_UPSTREAM is required.*; CONDUIT_SIDECAR_UPSTREAMS is required/);
    expect(out).not.toMatch(/migrating/);
  });

  it("names an unknown part", () => {
    const { status, out } = start({}, ["--only", "edge,db"]);
    expect(status).toBe(1);
    expect(out.trim().split("\n").pop()).toBe('[conduit] failed: arguments — --only: unknown part "db"; the parts are edge, web, sidecar');
  });
});
