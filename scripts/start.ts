/**
 * `npm start`: migrate the database, build the web app if needed, then run edge, web and
 * sidecar (and the offline demo model when no ANTHROPIC_API_KEY is set) as one supervised
 * group. Ctrl-C stops all of them; a part that dies is reported and takes the group down,
 * never left silently half-running.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { EnvError, parseEnv } from "../server/env/env";
import { findProjectRoot } from "../server/db/database-url";
import { deployMigrations } from "./db-migrate";

const root = findProjectRoot(path.dirname(new URL(import.meta.url).pathname));
const dev = process.argv.includes("--dev");
const t0 = Date.now();

function say(message: string): void {
  process.stdout.write(`[conduit] ${message}\n`);
}

function loadDotEnv(): void {
  const file = path.join(root, ".env");
  if (existsSync(file)) process.loadEnvFile(file);
}

/** A stable secret kept in the data directory, so sessions survive restarts. */
function ensureSecret(dataDir: string): string {
  const file = path.join(dataDir, ".auth-secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return secret;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

function needsBuild(): boolean {
  const buildId = path.join(root, ".next", "BUILD_ID");
  if (!existsSync(buildId)) return true;
  const built = statSync(buildId).mtimeMs;
  const sources = ["app", "components", "server", "next.config.mjs", "postcss.config.mjs"].map((p) => path.join(root, p));
  return sources.some((p) => existsSync(p) && (statSync(p).isDirectory() ? newestMtime(p) : statSync(p).mtimeMs) > built);
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(command)} ${args.join(" ")} exited with ${code}`))));
  });
}

interface Part {
  name: string;
  child: ChildProcess;
}

const parts: Part[] = [];
let shuttingDown = false;

function startPart(name: string, args: string[], env: NodeJS.ProcessEnv): Part {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  const prefix = (chunk: Buffer, stream: NodeJS.WriteStream) => {
    for (const line of chunk.toString().split("\n")) if (line.trim()) stream.write(`[${name}] ${line}\n`);
  };
  child.stdout?.on("data", (c: Buffer) => prefix(c, process.stdout));
  child.stderr?.on("data", (c: Buffer) => prefix(c, process.stderr));
  child.on("exit", (code, signal) => {
    if (shuttingDown) return;
    say(`${name} stopped unexpectedly (${signal ?? `exit code ${code}`}); stopping the others.`);
    void shutdown(1);
  });
  const part = { name, child };
  parts.push(part);
  return part;
}

async function shutdown(code: number): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  const alive = parts.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
  for (const p of alive) p.child.kill("SIGTERM");
  const deadline = Date.now() + 8000;
  while (Date.now() < deadline && alive.some((p) => p.child.exitCode === null && p.child.signalCode === null)) {
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const p of alive) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  process.exit(code);
}

async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(): Promise<void> {
  loadDotEnv();
  const env = parseEnv(process.env);
  const dataDir = path.resolve(root, env.CONDUIT_DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  const publicUrl = env.CONDUIT_PUBLIC_URL ?? `http://${env.HOST === "0.0.0.0" ? "127.0.0.1" : env.HOST}:${env.PORT}`;
  const databaseUrl = env.DATABASE_URL ?? `file:${path.join(dataDir, "conduit.db")}`;
  const demo = env.ANTHROPIC_API_KEY === undefined;

  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: dev ? "development" : "production",
    DATABASE_URL: databaseUrl,
    CONDUIT_DATA_DIR: dataDir,
    CONDUIT_WORKSPACES_ROOT: path.resolve(root, env.CONDUIT_WORKSPACES_ROOT ?? path.join(dataDir, "workspaces")),
    CONDUIT_PUBLIC_URL: publicUrl,
    NEXTAUTH_URL: env.NEXTAUTH_URL ?? publicUrl,
    NEXTAUTH_SECRET: env.NEXTAUTH_SECRET ?? ensureSecret(dataDir),
    CONDUIT_DEMO_MODEL: demo ? "1" : "0",
  };
  if (demo) {
    childEnv.ANTHROPIC_BASE_URL = `http://127.0.0.1:${env.CONDUIT_MODEL_PORT}`;
    childEnv.ANTHROPIC_API_KEY = "conduit-offline-demo";
  }

  say(`migrating the database (${databaseUrl.startsWith("file:") ? "SQLite" : "PostgreSQL"})`);
  await deployMigrations({ url: databaseUrl, log: (line: string) => say(line) });

  if (!dev && needsBuild()) {
    say("building the web app (first start or changed sources; about a minute)");
    await run(process.execPath, ["node_modules/next/dist/bin/next", "build"], { ...childEnv, NODE_ENV: "production" });
  }
  if (!existsSync(path.join(root, "public", "monaco", "vs"))) await run(process.execPath, ["scripts/copy-monaco.mjs"], childEnv);

  const tsx = ["--import", "tsx"];
  if (demo) {
    say("no ANTHROPIC_API_KEY: starting the offline demo model");
    startPart("model", [...tsx, "server/model-server/main.ts", "--port", String(env.CONDUIT_MODEL_PORT), "--host", "127.0.0.1"], childEnv);
  }
  const nextArgs = ["node_modules/next/dist/bin/next", dev ? "dev" : "start", "-p", String(env.CONDUIT_NEXT_PORT), "-H", "127.0.0.1"];
  startPart("web", nextArgs, childEnv);
  startPart("sidecar", [...tsx, "server/sidecar/main.ts"], childEnv);
  startPart("edge", [...tsx, "server/edge-proxy/main.ts"], childEnv);

  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));

  await waitForHttp(`http://127.0.0.1:${env.PORT}/healthz`, 60_000);
  await waitForHttp(`http://127.0.0.1:${env.CONDUIT_NEXT_PORT}/api/health`, 60_000);
  say(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s: open ${publicUrl}`);
}

main().catch((err: unknown) => {
  say(err instanceof EnvError ? err.message : `failed to start: ${err instanceof Error ? err.message : String(err)}`);
  void shutdown(1);
});
