/**
 * A separate Conduit for one spec: `node --import tsx scripts/start.ts` on free ports with its
 * own data directory under test-results/, started with the environment the spec needs (a sign-up
 * policy, say). It reuses the .next build of the main e2e server, so it is up in seconds.
 * `stop()` sends SIGINT, as Ctrl-C would, and waits until the whole group has exited.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { freePorts } from "./fresh-clone";

export interface ConduitInstance {
  /** The URL `npm start` printed (the edge). */
  url: string;
  dataDir: string;
  /** The SQLite file, for tests that set up state the UI cannot (an expired invitation). */
  databaseFile: string;
  /** Everything the instance printed so far. */
  output(): string;
  /** The supervisor's pid, which leads the instance's process group. */
  pid: number | undefined;
  stop(): Promise<void>;
}

const readyLine = /\[conduit\] ready in [^:]+: open (\S+)/;

/** Starts a Conduit and resolves once it printed its URL; rejects with its output when it exits first. */
export async function startConduitInstance(options: { name: string; env?: Record<string, string>; timeoutMs?: number }): Promise<ConduitInstance> {
  const root = process.cwd();
  const dataDir = path.join(root, "test-results", "instances", `${options.name}-${Date.now().toString(36)}`);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  // four ports held at once while the kernel picks them, so no two are the same (picked one after
  // another, a port closed could come back: CI once gave the web app and the edge one port)
  const [port, nextPort, sidecarPort, modelPort] = await freePorts(4);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    CONDUIT_NEXT_PORT: String(nextPort),
    CONDUIT_SIDECAR_PORT: String(sidecarPort),
    CONDUIT_MODEL_PORT: String(modelPort),
    CONDUIT_DATA_DIR: dataDir,
    CONDUIT_PUBLIC_URL: `http://127.0.0.1:${port}`,
    CONDUIT_EDGE_RATE_LIMIT: "off",
    LOG_LEVEL: "warn",
    ANTHROPIC_API_KEY: "",
    DATABASE_URL: "",
    NEXTAUTH_URL: "",
    NEXTAUTH_SECRET: "",
    ...options.env,
  };
  // its own process group: a last-resort kill reaches every part
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], { cwd: root, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`${options.name}: not ready within ${options.timeoutMs ?? 240_000} ms\n${output}`));
    }, options.timeoutMs ?? 240_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = readyLine.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${options.name}: exited (${code ?? signal}) before it was ready\n${output}`));
    });
  }).catch(async (err: unknown) => {
    await stopChild(child, exited);
    throw err;
  });
  return {
    url,
    dataDir,
    databaseFile: path.join(dataDir, "conduit.db"),
    output: () => output,
    pid: child.pid,
    stop: () => stopChild(child, exited),
  };
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGINT");
  const inTime = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 20_000))]);
  if (!inTime && child.pid) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
    await exited;
  }
}
