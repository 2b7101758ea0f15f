/**
 * Relay: CLI lines through the sidecar (session hub → event log in SQLite → Socket.IO rooms) to
 * socket.io-client subscribers, measured from the moment a runner reports a line to the moment
 * a client receives it.
 *
 * The sidecar runs in a child process (this file with `--relay-sidecar`), so its RSS and CPU are
 * its own and the clients' work is not counted in them. Both processes read CLOCK_MONOTONIC
 * (`process.hrtime`), which is one clock machine-wide, so timestamps compare across them.
 *
 * - fake: 50 sessions, each a fake runner streaming `stream_event` deltas (20 ms apart, 15 s)
 *   that carry their emit time; one subscriber per session, prompting through the socket.
 * - real: 3 sessions with the real CLI against the scripted model's slow stream; the child
 *   stamps each line as its runner reports it (the nearest point to "the CLI wrote it").
 *   Skipped with RELAY_SKIP_REAL=1.
 *
 * `RELAY_CPU_PROF=<dir>` writes the sidecar's V8 CPU profile of each run into that folder.
 *
 * Last line: `relay: sessions=50 p50_ms=… p99_ms=… events_per_s=… rss_mb=…` (the fake run).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import pino from "pino";
import { onSessionEvents } from "@/server/shared/wire/session";
import type { CliEnv } from "../test/cli-env";
import { io as connect, type Socket } from "socket.io-client";
import { deriveEdgeVouch, EDGE_VOUCH_HEADER } from "@/server/shared/edge-vouch";

const here = path.dirname(fileURLToPath(import.meta.url));
const selfPath = fileURLToPath(import.meta.url);
const origin = "http://127.0.0.1:3999";
const secret = "relay-bench-secret-".padEnd(40, "x");

interface RunConfig {
  mode: "fake" | "real";
  sessions: number;
  /** fake: ms between lines of one session */
  intervalMs: number;
  /** fake: how long each session streams */
  durationMs: number;
}

interface Ready {
  port: number;
  token: string;
  sessionIds: string[];
}

interface SidecarStats {
  wallMs: number;
  cpuMs: number;
  rssMaxMb: number;
  storedEvents: number;
  /** real mode: per session, the hrtime (µs) at which its runner reported each CLI line, in order. */
  lineTimes: Record<string, number[]>;
  /** fake mode: ms from the runner's line to the hub handing the stored event to Socket.IO. */
  sidecarLatenciesMs: number[];
}

interface RunResult {
  sessions: number;
  latenciesMs: number[];
  events: number;
  eventsPerS: number;
  stats: SidecarStats;
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

// ---------------------------------------------------------------------------------------------
// the bench process: clients

/** Runs both configurations and prints the figures. */
export default async function run(): Promise<void> {
  if (process.env.RELAY_SKIP_REAL !== "1") {
    const real = await runOnce({ mode: "real", sessions: 3, intervalMs: 0, durationMs: 0 });
    console.log(describeRun("real CLI", real));
  }
  const fake = await runOnce({ mode: "fake", sessions: 50, intervalMs: 20, durationMs: 15_000 });
  console.log(describeRun("fake CLI", fake));
  const { p50, p99 } = percentiles(fake.latenciesMs);
  console.log(
    `relay: sessions=${fake.sessions} p50_ms=${p50.toFixed(2)} p99_ms=${p99.toFixed(2)} events_per_s=${Math.round(fake.eventsPerS)} rss_mb=${Math.round(fake.stats.rssMaxMb)}`,
  );
}

function describeRun(label: string, r: RunResult): string {
  const { p50, p99 } = percentiles(r.latenciesMs);
  const max = r.latenciesMs.reduce((a, b) => Math.max(a, b), 0);
  const cpu = (100 * r.stats.cpuMs) / r.stats.wallMs;
  const inside = percentiles(r.stats.sidecarLatenciesMs);
  const insideText =
    r.stats.sidecarLatenciesMs.length > 0
      ? ` (inside the sidecar, line → socket write: p50=${inside.p50.toFixed(2)} ms p99=${inside.p99.toFixed(2)} ms)`
      : "";
  return (
    `relay (${label}): sessions=${r.sessions} events=${r.events} stored=${r.stats.storedEvents} latency p50=${p50.toFixed(2)} ms ` +
    `p99=${p99.toFixed(2)} ms max=${max.toFixed(1)} ms${insideText}, ${Math.round(r.eventsPerS)} events/s, ` +
    `sidecar rss max ${Math.round(r.stats.rssMaxMb)} MB, cpu ${cpu.toFixed(0)}% of one core; machine load average ${os.loadavg()[0]!.toFixed(1)} on ${os.availableParallelism()} cores`
  );
}

function percentiles(values: number[]): { p50: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

async function runOnce(config: RunConfig): Promise<RunResult> {
  // RELAY_CPU_PROF=<dir>: the sidecar's V8 CPU profile of the run, written there (`.cpuprofile`)
  const profile = process.env.RELAY_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.RELAY_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...profile, "--import", "tsx", selfPath, "--relay-sidecar", JSON.stringify(config)], {
    cwd: path.join(here, ".."),
    stdio: ["pipe", "pipe", "inherit"],
  });
  const replies = lineReader(child);
  const sockets: Socket[] = [];
  try {
    const ready = (await replies.next()) as Ready;
    const received = new Map<string, { at: number; seq: number; t?: number }[]>();
    const done = new Map<string, () => void>();
    const finished = ready.sessionIds.map((id) => new Promise<void>((resolve) => done.set(id, resolve)));
    let firstAt = 0;
    let lastAt = 0;

    for (const sessionId of ready.sessionIds) {
      const socket = connect(`http://127.0.0.1:${ready.port}`, {
        transports: ["websocket"],
        // what the edge adds to everything it forwards: the sidecar's port answers nothing else
        extraHeaders: { origin, [EDGE_VOUCH_HEADER]: await deriveEdgeVouch(secret) },
        auth: { token: ready.token },
        reconnection: false,
        forceNew: true,
      });
      sockets.push(socket);
      const list: { at: number; seq: number; t?: number }[] = [];
      received.set(sessionId, list);
      onSessionEvents(socket, (event) => {
        const at = nowUs();
        if (event.kind !== "cli") return;
        const payload = event.payload as { type?: string; event?: { t?: number } };
        firstAt ||= at;
        lastAt = at;
        list.push({ at, seq: event.seq, t: payload.event?.t });
        if (payload.type === "result") done.get(sessionId)?.();
      });
      await new Promise<void>((resolve, reject) => {
        socket.once("connect", () => resolve());
        socket.once("connect_error", reject);
      });
      const ack = (await socket.emitWithAck("session:subscribe", { sessionId, afterSeq: 0 })) as {
        ok: boolean;
        data?: { events: { seq: number; kind: string }[] };
      };
      if (!ack.ok) throw new Error(`subscribe failed: ${JSON.stringify(ack)}`);
      // Lines already in the log keep their place (for the real run's index match) but carry no latency.
      for (const event of ack.data?.events ?? [])
        if (event.kind === "cli") list.unshift({ at: Number.NaN, seq: event.seq });
      list.sort((a, b) => a.seq - b.seq);
    }

    child.stdin.write("start\n");
    await replies.next();
    await Promise.all(
      sockets.map(async (socket, i) => {
        const text = config.mode === "real" ? "[scenario:relay-slow] go" : "stream";
        const ack = (await socket.emitWithAck("session:prompt", {
          sessionId: ready.sessionIds[i],
          text,
          commandId: `relay-prompt-${i}`,
        })) as { ok: boolean };
        if (!ack.ok) throw new Error(`prompt failed: ${JSON.stringify(ack)}`);
      }),
    );
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error("relay: sessions did not finish in time")), 120_000).unref(),
    );
    await Promise.race([Promise.all(finished), timeout]);

    child.stdin.write("stats\n");
    const stats = (await replies.next()) as SidecarStats;
    const latenciesMs: number[] = [];
    let events = 0;
    for (const [sessionId, list] of received) {
      events += list.filter((e) => !Number.isNaN(e.at)).length;
      const lineTimes = stats.lineTimes[sessionId];
      list.forEach((entry, i) => {
        const t = config.mode === "fake" ? entry.t : lineTimes?.[i];
        if (typeof t === "number" && !Number.isNaN(entry.at)) latenciesMs.push((entry.at - t) / 1000);
      });
    }
    const seconds = Math.max(0.001, (lastAt - firstAt) / 1e6);
    return { sessions: config.sessions, latenciesMs, events, eventsPerS: events / seconds, stats };
  } finally {
    for (const socket of sockets) socket.close();
    child.stdin.end("exit\n");
    await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once("exit", resolve)));
  }
}

/** JSON lines from the child's stdout, one `next()` per line. */
function lineReader(child: ChildProcessWithoutNullStreams | ReturnType<typeof spawn>) {
  const queue: unknown[] = [];
  const waiters: ((value: unknown) => void)[] = [];
  let failed: Error | undefined;
  const fail = (err: Error) => {
    failed = err;
    for (const w of waiters.splice(0)) w(Promise.reject(err));
  };
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (!line.startsWith("{")) return;
    const value = JSON.parse(line) as unknown;
    const waiter = waiters.shift();
    if (waiter) waiter(value);
    else queue.push(value);
  });
  child.once("exit", (code) => fail(new Error(`relay sidecar exited (${code})`)));
  return {
    next(): Promise<unknown> {
      if (queue.length > 0) return Promise.resolve(queue.shift());
      if (failed) return Promise.reject(failed);
      return new Promise((resolve) => waiters.push(resolve));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// the sidecar process

async function serveSidecar(config: RunConfig): Promise<void> {
  const [
    { mintSocketToken },
    { createSocketServer },
    { attachSessionSockets },
    { SessionHub },
    { createSessionFixtures },
    { fakeRunnerFactory },
    { startWalCheckpointer },
  ] = await Promise.all([
    import("../server/shared/socket-token"),
    import("../server/sidecar/socket/create-socket-server"),
    import("../server/sidecar/socket/session-socket"),
    import("../server/sidecar/session/session-hub"),
    import("../test/session-fixtures"),
    import("../test/fake-session-runner"),
    import("../server/db/wal-checkpointer"),
  ]);
  const log = pino({ level: "silent" });
  const out = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
  const lineTimes: Record<string, number[]> = {};

  let cli: CliEnv | undefined;
  let createRunner: ConstructorParameters<typeof SessionHub>[0]["createRunner"];
  if (config.mode === "real") {
    const [{ startCliEnv }, { say }, { createSessionRunner }] = await Promise.all([
      import("../test/cli-env"),
      import("../server/model-server/scenario"),
      import("../server/sidecar/session/session-runner"),
    ]);
    cli = await startCliEnv();
    cli.server.addScenario("relay-slow", [
      say(Array.from({ length: 80 }, (_, i) => `word${i} `).join(""), { chunkDelayMs: 30 }),
    ]);
    const env = cli;
    createRunner = (options, decidePermission) => {
      const runner = createSessionRunner(options, { cliPath: env.cliPath, decidePermission, baseEnv: env.env });
      const times: number[] = (lineTimes[options.sessionId] = []);
      // Registered before the hub's listener: the stamp is taken as the runner reports the line.
      runner.onDidEvent((event) => {
        if (event.type === "line") times.push(nowUs());
      });
      return runner;
    };
  } else {
    const lines = Math.floor(config.durationMs / config.intervalMs);
    createRunner = fakeRunnerFactory({
      onPrompt: (runner, input) => {
        let n = 0;
        const session_id = runner.options.claudeSessionId;
        const tick = () => {
          if (n >= lines) {
            runner.emitLine({
              type: "result",
              subtype: "success",
              is_error: false,
              session_id,
              uuid: crypto.randomUUID(),
              user_message_uuids: [input.uuid],
            });
            return;
          }
          const delta = { type: "text_delta", text: `token ${n} of a streamed answer ` };
          runner.emitLine({
            type: "stream_event",
            event: { type: "content_block_delta", index: 0, delta, t: nowUs() },
            session_id,
            uuid: crypto.randomUUID(),
          });
          n += 1;
          runner.later(tick, config.intervalMs);
        };
        // Sessions start spread over one interval, as real ones would.
        runner.later(tick, Math.random() * config.intervalMs);
      },
    }).create;
  }

  const fx = await createSessionFixtures(cli ? { rootPath: cli.cwd } : {});
  // As the sidecar's main.ts does: checkpoints off the event loop.
  const checkpointer = await startWalCheckpointer(fx.db, fx.url, { log });
  const hub = new SessionHub({ db: fx.db, createRunner, configRoot: path.join(fx.dataDir, "claude-config"), log });
  const server = createSocketServer({
    secret,
    allowedOrigins: [origin],
    findUser: async (id) =>
      (await fx.db.user.findUnique({
        where: { id },
        select: { id: true, email: true, name: true, disabledAt: true, sessionVersion: true },
      })) ?? undefined,
    log,
  });
  attachSessionSockets(server.io, { hub, db: fx.db, log });
  // Registered after the socket relay: runs once Socket.IO has taken the event.
  const sidecarLatenciesMs: number[] = [];
  hub.onDidEmitEvent((event) => {
    const t = (event.payload as { event?: { t?: unknown } } | null)?.event?.t;
    if (typeof t === "number") sidecarLatenciesMs.push((nowUs() - t) / 1000);
  });
  const port = await server.listen(0, "127.0.0.1");
  const owner = { id: fx.owner.id, name: fx.owner.name };
  const access = { workspace: fx.workspace, role: "owner" };
  const sessionIds: string[] = [];
  for (let i = 0; i < config.sessions; i++) {
    sessionIds.push((await hub.createSession(owner, access, { mode: "default", commandId: `relay-create-${i}` })).id);
  }
  out({ port, token: await mintSocketToken(secret, owner.id, 3600), sessionIds } satisfies Ready);

  let startedAt = 0;
  let cpuAtStart = process.cpuUsage();
  let rssMax = 0;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, process.memoryUsage().rss)), 100);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "start") {
      startedAt = performance.now();
      cpuAtStart = process.cpuUsage();
      rssMax = process.memoryUsage().rss;
      sidecarLatenciesMs.length = 0;
      out({ started: true });
    } else if (line === "stats") {
      const cpu = process.cpuUsage(cpuAtStart);
      rssMax = Math.max(rssMax, process.memoryUsage().rss);
      const storedEvents = await fx.db.sessionEvent.count();
      out({
        wallMs: performance.now() - startedAt,
        cpuMs: (cpu.user + cpu.system) / 1000,
        rssMaxMb: rssMax / 1024 / 1024,
        storedEvents,
        lineTimes,
        sidecarLatenciesMs,
      } satisfies SidecarStats);
    } else if (line === "exit") {
      break;
    }
  }
  clearInterval(sampler);
  await server.close();
  await hub.close();
  await checkpointer.close();
  await cli?.close();
  await fx.close();
}

const sidecarFlag = process.argv.indexOf("--relay-sidecar");
if (sidecarFlag !== -1) {
  serveSidecar(JSON.parse(process.argv[sidecarFlag + 1] ?? "{}") as RunConfig).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
} else if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
