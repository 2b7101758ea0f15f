/**
 * `npm start`: migrate the database, build the web app if needed, then run edge, web and
 * sidecar (and the offline demo model when no ANTHROPIC_API_KEY is set) as one supervised
 * group. `npm start -- --only edge|web|sidecar[,…]` runs only those (the parts of a
 * several-machine layout, docs/DEPLOY.md); the edge runs under Deno with CONDUIT_EDGE_RUNTIME=deno. Ctrl-C stops all of them. A part that dies while the group starts is reported (its name
 * and cause, in one line at the end) and takes the group down with a non-zero exit, never left
 * half-running. Once running, a part that dies is restarted after a growing pause (0.5 s, 1 s,
 * 2 s … see start-supervisor.ts); a crash loop is reported with the part's last stderr lines and
 * ends the group the same way.
 *
 * Every part reads the same configuration (server/env, with its defaults); this script hands
 * each one the complete record, so `npm start` works with no variable set at all.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { EnvError, parseEnv } from "../server/env/env";
import { deriveEdgeVouch, EDGE_VOUCH_HEADER } from "../server/shared/edge-vouch";
import { findProjectRoot, redactUrl } from "../server/db/database-url";
import { deployMigrations } from "./db-migrate";
import { missingForParts, parseStartArgs, runs, StartArgsError, type StartArgs } from "./start-parts";
import { childEnvironment, portsToBind, probeHost, resolveStartSettings, withDotEnv } from "./start-settings";
import { CrashTracker, DEFAULT_RESTART_POLICY, seconds } from "./start-supervisor";
import { acceptsTcp } from "./tcp-probe";

const root = findProjectRoot(path.dirname(new URL(import.meta.url).pathname));
/** The command line, parsed in main() (a bad one is a start failure like any other). */
let args: StartArgs = { dev: false, only: undefined };
const t0 = Date.now();

function elapsed(since = t0): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

function say(message: string): void {
  process.stdout.write(`[conduit] ${message}\n`);
}

/** A start-up failure that names the part and the cause. */
class StartError extends Error {
  constructor(
    readonly part: string,
    message: string,
  ) {
    super(message);
  }
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
  const sources = ["app", "components", "server", "proxy.ts", "next.config.mjs", "postcss.config.mjs"].map((p) => path.join(root, p));
  return sources.some((p) => existsSync(p) && (statSync(p).isDirectory() ? newestMtime(p) : statSync(p).mtimeMs) > built);
}

/** Runs a build step with its output in a log file, printing the elapsed time while it runs. */
function runLogged(label: string, command: string, args: string[], env: NodeJS.ProcessEnv, logFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const out = createWriteStream(logFile);
    const child = spawn(command, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    const ticker = setInterval(() => say(`${label}… ${elapsed(started)}`), 10_000);
    const finish = (err?: Error) => {
      clearInterval(ticker);
      out.end(() => (err ? reject(err) : resolve()));
    };
    child.on("error", (err) => finish(new StartError("build", err.message)));
    child.on("exit", (code, signal) => {
      if (code === 0) return finish();
      const tail = existsSync(logFile) ? readFileSync(logFile, "utf8").trim().split("\n").slice(-25) : [];
      for (const line of tail) process.stderr.write(`[build] ${line}\n`);
      finish(new StartError("build", `${label} failed (${signal ?? `exit code ${code}`}); the whole log is in ${path.relative(root, logFile)}`));
    });
  });
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(command)} ${args.join(" ")} exited with ${code}`))));
  });
}

/** Resolves when nothing listens on host:port; otherwise names the variable to change. */
function checkPortFree(p: { name: string; variable: string; port: number; host: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", (err: NodeJS.ErrnoException) => {
      const why = err.code === "EADDRINUSE" ? "is already in use by another program" : `cannot be bound (${err.code ?? err.message})`;
      reject(new StartError(p.name, `port ${p.port} on ${p.host} (${p.variable}) ${why}; stop that program or set ${p.variable} to another port`));
    });
    server.listen(p.port, p.host, () => server.close(() => resolve()));
  });
}

interface Part {
  name: string;
  child: ChildProcess;
  /** How to start it again. */
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Answers once the part serves. */
  probe: () => Promise<boolean>;
  readyTimeoutMs: number;
  /** The last lines the part printed, to name the cause if it dies. */
  recent: string[];
  /** Its last stderr lines over every run, for a crash loop's report. */
  stderrTail: string[];
  crashes: CrashTracker;
  restartTimer?: NodeJS.Timeout;
}

const parts: Part[] = [];
let shuttingDown = false;
/** Every part answered once: from now on a part that dies is restarted instead of failing the start. */
let groupReady = false;
let failure: StartError | undefined;

/** The most telling line a part printed: a pino/JSON error's message, else its last line. */
function causeOf(part: Part): string {
  for (let i = part.recent.length - 1; i >= 0; i--) {
    const line = part.recent[i]!;
    if (!line.startsWith("{")) continue;
    try {
      const entry = JSON.parse(line) as { level?: number | string; msg?: string; message?: string; err?: { message?: string } };
      const level = entry.level;
      if (level === "error" || level === "fatal" || (typeof level === "number" && level >= 50)) {
        return entry.err?.message ?? entry.msg ?? entry.message ?? line;
      }
    } catch {
      // not JSON
    }
  }
  const plain = part.recent.filter((l) => !l.startsWith("{") && !/^\s+at /.test(l));
  return plain.slice(-3).join(" ").trim() || "no output";
}

const STDERR_TAIL_LINES = 10;

function spawnChild(part: Part): ChildProcess {
  const child = spawn(part.command, part.args, { cwd: root, env: part.env, stdio: ["ignore", "pipe", "pipe"] });
  const prefix = (chunk: Buffer, stream: NodeJS.WriteStream) => {
    for (const line of chunk.toString().split("\n")) {
      if (!line.trim()) continue;
      stream.write(`[${part.name}] ${line}\n`);
      part.recent.push(line);
      if (part.recent.length > 30) part.recent.shift();
      if (stream === process.stderr) {
        part.stderrTail.push(line);
        if (part.stderrTail.length > STDERR_TAIL_LINES) part.stderrTail.shift();
      }
    }
  };
  child.stdout?.on("data", (c: Buffer) => prefix(c, process.stdout));
  child.stderr?.on("data", (c: Buffer) => prefix(c, process.stderr));
  child.on("exit", (code, signal) => onPartExit(part, child, signal ?? `exit code ${code}`));
  return child;
}

/**
 * A part died. While the group starts, that ends the start (the cause is almost always a setting).
 * Once it ran, the part is started again after a growing pause; a crash loop ends the group.
 */
function onPartExit(part: Part, child: ChildProcess, how: string): void {
  if (shuttingDown || part.child !== child) return;
  const cause = causeOf(part);
  if (!groupReady) {
    failure ??= new StartError(part.name, `stopped unexpectedly (${how}): ${cause}`);
    say(`${part.name} stopped unexpectedly; stopping the others.`);
    void shutdown(1);
    return;
  }
  const decision = part.crashes.crashed();
  if (decision.action === "give-up") {
    const window = seconds(DEFAULT_RESTART_POLICY.windowMs);
    say(`${part.name} is in a crash loop (${decision.crashes} crashes within ${window}); its last stderr lines:`);
    for (const line of part.stderrTail.length > 0 ? part.stderrTail : ["(none)"]) say(`  ${part.name} | ${line}`);
    failure ??= new StartError(part.name, `crash loop: ${decision.crashes} crashes within ${window}, the last (${how}): ${cause}`);
    void shutdown(1);
    return;
  }
  const why = cause === "no output" ? "" : `: ${cause}`;
  say(`${part.name} stopped unexpectedly (${how})${why}; restarting in ${seconds(decision.delayMs)} (crash ${decision.crashes} of at most ${DEFAULT_RESTART_POLICY.maxCrashes} within ${seconds(DEFAULT_RESTART_POLICY.windowMs)})`);
  part.restartTimer = setTimeout(() => restartPart(part), decision.delayMs);
}

function restartPart(part: Part): void {
  part.restartTimer = undefined;
  if (shuttingDown) return;
  part.recent = [];
  part.crashes.started();
  part.child = spawnChild(part);
  const started = Date.now();
  // A restart that dies again is the exit handler's to count; a hung one is killed and counted too.
  void waitUntilUp(part, part.probe, part.readyTimeoutMs, "up again").catch(() => {
    if (!shuttingDown && alive(part) && Date.now() - started >= part.readyTimeoutMs) part.child.kill("SIGKILL");
  });
}

function startPart(name: string, command: string, args: string[], env: NodeJS.ProcessEnv, probe: () => Promise<boolean>, readyTimeoutMs: number): Part {
  const part = { name, command, args, env, probe, readyTimeoutMs, recent: [], stderrTail: [], crashes: new CrashTracker() } as unknown as Part;
  part.child = spawnChild(part);
  parts.push(part);
  return part;
}

const alive = (p: Part) => p.child.exitCode === null && p.child.signalCode === null;

async function shutdown(code: number): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  for (const p of parts) clearTimeout(p.restartTimer);
  const running = parts.filter(alive);
  for (const p of running) p.child.kill("SIGTERM");
  const deadline = Date.now() + 8000;
  while (Date.now() < deadline && running.some(alive)) await new Promise((r) => setTimeout(r, 100));
  for (const p of running) if (alive(p)) p.child.kill("SIGKILL");
  if (failure) say(`failed: ${failure.part} — ${failure.message}`);
  else if (code === 0) say("stopped");
  process.exit(failure ? 1 : code);
}

/**
 * `check`'s answer, or false when it has not settled within `ms`. A probe's own abort signal has
 * been seen not to end a hung request (a start waited ten minutes on the web app's first health
 * check); this timer is an ordinary, ref'd one.
 */
function withinMs(check: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([check, late]).finally(() => clearTimeout(timer));
}

/** Waits until `probe` succeeds; fails early when the part has died. */
async function waitUntilUp(part: Part, probe: () => Promise<boolean>, timeoutMs: number, label = "up"): Promise<void> {
  const started = Date.now();
  const child = part.child;
  for (;;) {
    if (!alive(part) || part.child !== child || shuttingDown) throw new StartError(part.name, "stopped before it was ready");
    if (await withinMs(probe(), 5000)) {
      say(`${part.name} ${label} (${elapsed(started)}, pid ${child.pid})`);
      return;
    }
    if (Date.now() - started > timeoutMs) throw new StartError(part.name, `did not answer within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

async function answersHttp(url: string, headers: Record<string, string> = {}): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000), headers });
    await res.arrayBuffer();
    return res.status < 500;
  } catch {
    return false;
  }
}

/** The Deno binary of the pinned `deno` package (an ELF file, so the supervisor's signals reach Deno itself). */
function denoBinary(): string {
  const binary = path.join(root, "node_modules", "deno", "deno");
  if (!existsSync(binary)) throw new StartError("edge", `CONDUIT_EDGE_RUNTIME=deno, but ${path.relative(root, binary)} is missing; run npm install`);
  return binary;
}

async function main(): Promise<void> {
  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));
  try {
    args = parseStartArgs(process.argv.slice(2));
  } catch (err) {
    if (err instanceof StartArgsError) throw new StartError("arguments", err.message);
    throw err;
  }
  const { dev, only } = args;
  const environment = withDotEnv(root, process.env);
  const settings = resolveStartSettings(parseEnv(environment), root);
  const { env } = settings;
  const missing = missingForParts(env, only);
  if (missing.length > 0) throw new StartError("configuration", `--only ${[...only!].join(",")}: ${missing.join("; ")}`);
  const edge = runs(args, "edge");
  const web = runs(args, "web");
  const sidecar = runs(args, "sidecar");
  const usesDatabase = web || sidecar;
  const sqlite = settings.databaseUrl.startsWith("file:");
  if (only) say(`running ${[...only].join(", ")} (--only); the other parts run elsewhere`);
  say(
    `configuration: ${sqlite ? "SQLite" : "PostgreSQL"} database, data in ${path.relative(root, settings.dataDir) || "."}, ` +
      `${settings.demo ? "offline demo model (no ANTHROPIC_API_KEY)" : "Anthropic API"}, sign-up ${env.CONDUIT_SIGNUP}` +
      (edge && env.CONDUIT_EDGE_RUNTIME === "deno" ? ", edge under Deno" : ""),
  );
  if (usesDatabase) {
    mkdirSync(settings.dataDir, { recursive: true, mode: 0o700 });
    // mkdir's mode does not apply to a directory that already exists: the data is the operator's alone
    chmodSync(settings.dataDir, 0o700);
  }
  const ports = portsToBind(settings, only);
  const seen = new Map<number, string>();
  for (const p of ports) {
    const other = seen.get(p.port);
    if (other) throw new StartError(p.name, `${p.variable} and ${other} both name port ${p.port}; give each part its own port`);
    seen.set(p.port, p.variable);
  }
  for (const p of ports) await checkPortFree(p);
  // with --only the secret is set (missingForParts): a generated one would differ per machine
  const secret = env.NEXTAUTH_SECRET ?? ensureSecret(settings.dataDir);
  const childEnv = childEnvironment(settings, { inherited: environment, secret, dev });

  if (usesDatabase) {
    const migrating = Date.now();
    say(`migrating the database (${sqlite ? "SQLite" : `PostgreSQL at ${redactUrl(settings.databaseUrl)}`})`);
    try {
      await deployMigrations({ url: settings.databaseUrl, log: (line: string) => say(`  ${line}`) });
    } catch (err) {
      throw new StartError("migrate", err instanceof Error ? err.message : String(err));
    }
    say(`database ready (${elapsed(migrating)})`);
  }

  if (web && !dev && needsBuild()) {
    say("building the web app (first start or changed sources; about a minute on two cores)");
    const building = Date.now();
    await runLogged("building the web app", process.execPath, ["node_modules/next/dist/bin/next", "build"], { ...childEnv, NODE_ENV: "production" }, path.join(settings.dataDir, "build.log"));
    say(`web app built (${elapsed(building)})`);
  }
  if (web && !existsSync(path.join(root, "public", "monaco", "vs"))) await run(process.execPath, ["scripts/copy-monaco.mjs"], childEnv);

  const tsx = ["--import", "tsx"];
  const starting: Promise<void>[] = [];
  // CONDUIT_CPU_PROF_DIR (benchmarks): each Node part writes a V8 CPU profile into <dir>/<part> when it exits
  const profileDir = process.env.CONDUIT_CPU_PROF_DIR;
  const launch = (name: string, command: string, partArgs: string[], probe: () => Promise<boolean>, timeoutMs: number) => {
    const profiled = profileDir && command === process.execPath ? ["--cpu-prof", `--cpu-prof-dir=${path.join(profileDir, name)}`, ...partArgs] : partArgs;
    const part = startPart(name, command, profiled, childEnv, probe, timeoutMs);
    starting.push(waitUntilUp(part, probe, timeoutMs));
  };
  const node = process.execPath;
  const urlHost = (host: string) => (probeHost(host).includes(":") ? `[${probeHost(host)}]` : probeHost(host));
  if (sidecar && settings.demo) {
    launch("model", node, [...tsx, "server/model-server/main.ts", "--port", String(env.CONDUIT_MODEL_PORT), "--host", "127.0.0.1"], () => acceptsTcp(env.CONDUIT_MODEL_PORT), 60_000);
  }
  if (web) {
    // the web app's port answers only what the edge vouched for (proxy.ts): the probe vouches too
    const vouch = { [EDGE_VOUCH_HEADER]: await deriveEdgeVouch(secret) };
    const webProbe = () => answersHttp(`http://${urlHost(env.CONDUIT_NEXT_HOST)}:${env.CONDUIT_NEXT_PORT}/api/health`, vouch);
    launch("web", node, ["node_modules/next/dist/bin/next", dev ? "dev" : "start", "-p", String(env.CONDUIT_NEXT_PORT), "-H", env.CONDUIT_NEXT_HOST], webProbe, 120_000);
  }
  if (sidecar) {
    launch("sidecar", node, [...tsx, "server/sidecar/main.ts"], () => acceptsTcp(env.CONDUIT_SIDECAR_PORT, probeHost(env.CONDUIT_SIDECAR_HOST)), 60_000);
  }
  if (edge) {
    const edgeProbe = () => answersHttp(`http://${urlHost(env.HOST)}:${env.PORT}/healthz`);
    if (env.CONDUIT_EDGE_RUNTIME === "deno") {
      // the same handler as under Node (server/edge-proxy/deno.ts); the first start compiles it
      const denoArgs = ["run", "--node-modules-dir=manual", "--unstable-sloppy-imports", "--allow-net", "--allow-env", "--allow-read", "server/edge-proxy/deno.ts"];
      launch("edge", denoBinary(), denoArgs, edgeProbe, 90_000);
    } else {
      launch("edge", node, [...tsx, "server/edge-proxy/main.ts"], edgeProbe, 60_000);
    }
  }
  await Promise.all(starting);
  groupReady = true;
  say(edge ? `ready in ${elapsed()}: open ${settings.publicUrl}` : `ready in ${elapsed()}: ${[...only!].join(", ")} serving; people open ${settings.publicUrl}`);
}

main().catch((err: unknown) => {
  if (shuttingDown) return;
  if (err instanceof EnvError) failure = new StartError("configuration", err.message.replace(/\n\s*/g, " "));
  else if (err instanceof StartError) failure ??= err;
  else failure ??= new StartError("start", err instanceof Error ? err.message : String(err));
  void shutdown(1);
});
