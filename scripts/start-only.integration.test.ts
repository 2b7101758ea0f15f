/**
 * `npm start -- --only sidecar` and `npm start -- --only edge` as two separate groups (as on two
 * machines), sharing only their settings: the lone sidecar migrates its database and serves
 * (with the demo model beside it), the lone edge binds nothing but its own port and routes
 * Socket.IO to the sidecar it was given, whose handshake comes back through it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts, groupAlive, isListening } from "../e2e/support/fresh-clone";
import { until } from "../test/until";

const root = path.resolve(import.meta.dirname, "..");
const dataDir = mkdtempSync(path.join(os.tmpdir(), "conduit-only-"));
const secret = "only-test-secret-".padEnd(44, "x");

interface Group {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startGroup(only: string, env: Record<string, string>): Group {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts", "--only", only], {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "", HOME: os.homedir(), NEXTAUTH_SECRET: secret, ...env } as Record<string, string> as NodeJS.ProcessEnv,
  });
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function stopGroup(group: Group | undefined): Promise<void> {
  if (!group || group.child.exitCode !== null || !groupAlive(group.child.pid!)) return;
  process.kill(-group.child.pid!, "SIGINT");
  await group.exited;
}

let sidecar: Group;
let edge: Group;
let ports: { edge: number; web: number; sidecar: number; model: number };

beforeAll(async () => {
  const [edgePort, web, sidecarPort, model] = await freePorts(4);
  ports = { edge: edgePort!, web: web!, sidecar: sidecarPort!, model: model! };
  const shared = {
    CONDUIT_PUBLIC_URL: `http://127.0.0.1:${ports.edge}`,
    CONDUIT_NEXT_PORT: String(ports.web),
    CONDUIT_SIDECAR_PORT: String(ports.sidecar),
    CONDUIT_MODEL_PORT: String(ports.model),
    LOG_LEVEL: "warn",
  };
  sidecar = startGroup("sidecar", { ...shared, CONDUIT_DATA_DIR: dataDir, DATABASE_URL: `file:${path.join(dataDir, "conduit.db")}` });
  edge = startGroup("edge", {
    ...shared,
    PORT: String(ports.edge),
    CONDUIT_WEB_UPSTREAM: `http://127.0.0.1:${ports.web}`,
    CONDUIT_SIDECAR_UPSTREAMS: `http://127.0.0.1:${ports.sidecar}`,
  });
  for (const group of [sidecar, edge]) {
    await until(
      () => {
        if (group.child.exitCode !== null) throw new Error(`a group ended:\n${group.output()}`);
        return /\[conduit\] ready in /.test(group.output());
      },
      120_000,
      "both groups ready",
      100,
    );
  }
}, 150_000);

afterAll(async () => {
  await Promise.all([stopGroup(edge), stopGroup(sidecar)]);
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

describe("npm start -- --only", () => {
  it("runs only the parts named: the sidecar with its demo model and migrations, the edge alone", async () => {
    expect(sidecar.output()).toMatch(/\[conduit\] running sidecar \(--only\)/);
    expect(sidecar.output()).toMatch(/\[conduit\] database ready/);
    expect(sidecar.output()).toMatch(/\[conduit\] sidecar up /);
    expect(sidecar.output()).toMatch(/\[conduit\] model up /);
    expect(sidecar.output()).not.toMatch(/\[conduit\] (web|edge) up|building the web app/);
    expect(edge.output()).toMatch(/\[conduit\] edge up /);
    expect(edge.output()).not.toMatch(/migrating|\[conduit\] (web|sidecar|model) up/);
    // nobody started the web app
    expect(await isListening(ports.web)).toBe(false);
  });

  it("routes Socket.IO through the lone edge to the lone sidecar, and says the web app is not answering", async () => {
    const base = `http://127.0.0.1:${ports.edge}`;
    const res = await fetch(`${base}/socket.io/?EIO=4&transport=polling`, { headers: { cookie: "next-auth.session-token=x" } });
    const body = await res.text();
    expect(res.status, body).toBe(200);
    // Engine.IO's open packet, from the sidecar
    expect(body).toMatch(/^0\{"sid":"[^"]+"/);
    const page = await fetch(`${base}/api/health`);
    expect(page.status).toBe(502);
    expect(((await page.json()) as { error: { code: string } }).error.code).toBe("unavailable");
  });
});
