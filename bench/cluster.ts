/**
 * Cluster: several real sidecars on one PostgreSQL and one Redis (test/cluster/rig.ts), with the
 * fake CLI (`stream` mode: stream_event lines stamped with CLOCK_MONOTONIC when printed) so that
 * 150 sessions fit in memory. Runs the same measurement with 3 sidecars and with 1, and prints one
 * line per size:
 *
 *   cluster: sidecars=3 sessions=150 relay_p50_ms=… relay_p99_ms=… forward_extra_p50_ms=… failover_s=…
 *     answered_s=… relay_spread_p50_ms=… relay_spread_p99_ms=… relay_staggered_p50_ms=… relay_staggered_p99_ms=…
 *
 * - relay: a CLI's stdout line (its stamp) → a client's receipt; one client on every node watches
 *   every session, so most receipts cross Redis. Every session streams in phase (the same
 *   millisecond every 100 ms: the worst burst). relay_spread: the same streams again with each
 *   session's lines offset by its share of the 100 ms (its turns still start together).
 *   relay_staggered: the same streams a third time, the turns started one after another over a
 *   turn's length (4 s at 40 lines), as independent people start them; no burst of turn starts.
 * - forward_extra: the ack time of `session:set-mode` sent through a node that does not own the
 *   session minus through its owner (p50 of each, same sessions); n/a with one sidecar.
 * - failover: kill -9 of the node owning the most sessions → every one of its sessions is
 *   resumable: a prompt sent through a survivor right after the kill (again, same commandId, until
 *   accepted) is accepted (ack ok: the lease taken, a CLI started with --resume and handed the
 *   prompt); the slowest session. With one sidecar, the supervisor's restart as `npm start` does.
 *   answered: → every one of them has answered that prompt (a result). The first line also
 *   names when a survivor adopted the dead node and the refusals met on the way.
 * - The first line also gives the sidecars' own CPU (every thread, no child) over the three relay
 *   phases and their turns, per relayed line: a steadier figure than the relay's tail for
 *   comparing two builds on a busy host.
 * - Per relay phase, the whole machine's CPU a line by part (sidecars, CLIs, PostgreSQL, Redis,
 *   this bench) and how busy the cores were: whether the machine had room for the load at all.
 *
 * CLUSTER_SESSIONS (default 150), CLUSTER_SIZES (default "3,1"), CLUSTER_LINES (lines per session,
 * default 40, 100 ms apart). Targets (relay p99 ≤ 20 ms, forward ≤ 2 ms p50, failover ≤ 10 s) are
 * reported by docs/PERFORMANCE.md, never asserted here. CLUSTER_PROFILE_DIR, CLUSTER_KEEP and
 * CLUSTER_SIDECAR_ENV: see `measure`. Needs CONDUIT_TEST_PG_URL and CONDUIT_TEST_REDIS_URL.
 */
import { randomUUID } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { parsePayload } from "@/server/db/session-wire-event";
import { onSessionEvents } from "@/server/shared/wire/session";
import type { ChaosClient } from "@/test/chaos/rig";
import { clusterUnavailableReason, startCluster, type Cluster, type ClusterNode } from "@/test/cluster/rig";
import { commandCpuMs, machineCpuMs, processCpuMs, processTreeCpuMs } from "./support/process-cpu";
import { until } from "@/test/until";

interface SizeResult {
  sidecars: number;
  sessions: number;
  relayMs: number[];
  ownerAckMs: number[];
  forwardedAckMs: number[];
  /** kill -9 → the last of the dead node's sessions resumable (a prompt through a survivor accepted). */
  failoverS: number | undefined;
  /** kill -9 → the last of them answered. */
  answeredS?: number;
  /** kill -9 → the dead node adopted by a survivor (its row marked, its leases gone); several sidecars only. */
  adoptedS?: number;
  /** Relay with the sessions' streams spread over the 100 ms period instead of in phase. */
  relaySpreadMs: number[];
  /** The in-phase relay's receipts split by the receiving client's node: the session's owner, or another node (across Redis). */
  relayViaOwnerMs: number[];
  relayViaOtherMs: number[];
  /** The in-phase relay's receipts by the line's place in its turn: the first 3 (they meet the turn's start), the rest. */
  relayFirstLinesMs: number[];
  relayLaterLinesMs: number[];
  /** Relay with the turns' starts spread over a turn's length (one start every turn/sessions ms): independent people. */
  relayStaggeredMs: number[];
  notes: string[];
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const fmt = (v: number | undefined, digits = 2) => (v === undefined ? "n/a" : v.toFixed(digits));

/** Runs `work` over `items`, at most `limit` at once. */
async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** At most 6 commands of one socket at once (the sidecar allows a tab 8). */
const inFlight = new Map<ChaosClient, { running: number; waiting: (() => void)[] }>();
async function send(client: ChaosClient, event: string, payload: Record<string, unknown>) {
  let gate = inFlight.get(client);
  if (!gate) inFlight.set(client, (gate = { running: 0, waiting: [] }));
  while (gate.running >= 6) await new Promise<void>((r) => gate.waiting.push(r));
  gate.running += 1;
  try {
    return await client.command(event, payload, { ackTimeoutMs: 120_000, attempts: 2 });
  } finally {
    gate.running -= 1;
    gate.waiting.shift()?.();
  }
}

async function resultCount(cluster: Cluster, sessionId: string): Promise<number> {
  return cluster.db.sessionEvent.count({ where: { sessionId, kind: "cli", payload: { contains: '"type":"result"' } } });
}

async function promptAndWait(cluster: Cluster, client: ChaosClient, sessionId: string, text: string, timeoutMs: number): Promise<void> {
  const before = await resultCount(cluster, sessionId);
  const ack = await send(client, "session:prompt", { sessionId, text, commandId: randomUUID() });
  if (!ack?.ok) throw new Error(`prompt refused: ${ack ? JSON.stringify(ack.error) : "no ack"}`);
  await until(async () => (await resultCount(cluster, sessionId)) > before, timeoutMs, `a result in ${sessionId}`, 100);
}

/** A session's log from the prompt with `commandId` on, one word per event (kind, and the CLI line's type or the process phase). */
async function logSince(cluster: Cluster, sessionId: string, commandId: string): Promise<string> {
  const prompt = await cluster.db.sessionEvent.findFirst({ where: { sessionId, commandId }, select: { seq: true } });
  const rows = await cluster.db.sessionEvent.findMany({
    where: { sessionId, seq: { gte: (prompt?.seq ?? 1) - 3 } },
    orderBy: { seq: "asc" },
    select: { seq: true, kind: true, payload: true },
    take: 40,
  });
  const word = (r: { seq: number; kind: string; payload: string }) => {
    const parsed = parsePayload(r.payload);
    const p = (typeof parsed === "object" && parsed !== null ? parsed : {}) as {
      type?: string;
      subtype?: string;
      phase?: string;
      code?: string;
      error?: { code?: string; message?: string };
    };
    const error = p.error ? `(${p.error.code ?? ""}: ${p.error.message ?? ""})` : "";
    return `${r.seq}:${r.kind}${p.type ? `/${p.type}${p.subtype ? `.${p.subtype}` : ""}` : ""}${p.phase ? `/${p.phase}` : ""}${p.code ? `/${p.code}` : ""}${error}`;
  };
  return `${prompt ? `prompt at ${prompt.seq}` : "the prompt is not in the log"}; ${rows.map(word).join(" ")}`;
}

/** CPU ms used so far by the machine and by each part of the rig (a one-off read of /proc). */
interface PartsCpu {
  wall: number;
  machine: number;
  sidecars: number;
  clis: number;
  postgres: number;
  redis: number;
  bench: number;
}

function partsCpu(cluster: Cluster): PartsCpu {
  const pids = cluster.nodes.flatMap((node) => (node.process.pid ? [node.process.pid] : []));
  const sidecars = pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
  const usage = process.cpuUsage();
  const commands = commandCpuMs("postgres", "redis-server");
  return {
    wall: performance.now(),
    machine: machineCpuMs(),
    sidecars,
    // every process below a sidecar: its CLIs (the fake CLI here), and its two helpers (spawns, execs)
    clis: processTreeCpuMs(...pids) - sidecars,
    postgres: commands.postgres,
    redis: commands["redis-server"],
    bench: (usage.user + usage.system) / 1000,
  };
}

/**
 * A relay phase's cost to the whole machine: CPU ms a relayed line took across every process (the
 * sidecars, their CLIs and helpers, PostgreSQL, Redis, this bench with its watcher sockets, the rest: the
 * kernel and anything else running), how busy the cores were, and what one burst (every session's
 * line in the same millisecond: printed for the in-phase streams only) needs of all the cores. When that exceeds the relay
 * target, a burst's later lines wait for the work of the lines before them whatever the code path,
 * and this bench's part alone (one thread) is a floor under its last receipt.
 */
function phaseCost(phase: string, start: PartsCpu, end: PartsCpu, sessions: number, lines: number, burst = false): string {
  const count = sessions * lines;
  const cores = os.availableParallelism();
  const perLine = (key: keyof PartsCpu) => (end[key] - start[key]) / count;
  const machine = perLine("machine");
  const parts = (["sidecars", "clis", "postgres", "redis", "bench"] as const).map((key) => perLine(key));
  const rest = machine - parts.reduce((a, b) => a + b, 0);
  const wallS = (end.wall - start.wall) / 1000;
  const busy = (end.machine - start.machine) / (wallS * 1000 * cores);
  const [sidecars, clis, postgres, redis, bench] = parts.map((v) => fmt(v, 3));
  return (
    `${phase}, the whole machine: ${fmt(machine, 3)} ms of CPU a line (sidecars ${sidecars}, CLIs ${clis}, PostgreSQL ${postgres}, ` +
    `Redis ${redis}, this bench ${bench}, the rest ${fmt(rest, 3)}) over ${fmt(wallS)} s, ${fmt(busy * 100, 0)} % of ${cores} cores busy` +
    // only the in-phase streams come in bursts
    (burst
      ? `; a burst of ${sessions} lines takes ${fmt((sessions * machine) / cores, 1)} ms of all ${cores} cores, ${fmt(sessions * perLine("bench"), 1)} ms of this bench's one thread`
      : "")
  );
}

/** CLUSTER_SIDECAR_ENV ("NAME=value NAME=value") as an environment. */
function extraSidecarEnv(): Record<string, string> {
  const pairs = (process.env.CLUSTER_SIDECAR_ENV ?? "").split(/\s+/).filter((p) => p.includes("="));
  return Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]));
}

async function measure(sidecars: number, sessions: number, lines: number): Promise<SizeResult> {
  // every session on one node must fit (the failover moves a dead node's sessions to the survivors)
  // CLUSTER_PROFILE_DIR: each sidecar's CPU profile of the relay phase is written there
  // (bench/support/sidecar-cpu-profile.mjs; the CLI children do not inherit NODE_OPTIONS).
  // CLUSTER_KEEP=1 keeps the rig's directory (the sidecars' logs) after the run;
  // CLUSTER_SIDECAR_ENV="A=1 B=2" adds variables to every sidecar's environment.
  // CLUSTER_PROFILE_WINDOW=relay: the profiles hold the in-phase relay alone (default: boot to its
  // end); =phases: the three relay phases and their turns' ends (what a turn and a line cost).
  const profileDir = process.env.CLUSTER_PROFILE_DIR;
  const profileWindow = process.env.CLUSTER_PROFILE_WINDOW ?? "boot";
  const profiling: Record<string, string> = profileDir
    ? {
        NODE_OPTIONS: `--import ${path.join(import.meta.dirname, "support/sidecar-cpu-profile.mjs")}`,
        CLUSTER_PROFILE_DIR: path.resolve(profileDir),
        CLUSTER_PROFILE_WINDOW: profileWindow,
      }
    : {};
  const cluster = await startCluster({
    sidecars,
    sidecarEnv: { CONDUIT_SESSION_MAX: String(sessions + 10), ...profiling, ...extraSidecarEnv() },
    keep: process.env.CLUSTER_KEEP === "1",
  });
  if (process.env.CLUSTER_KEEP === "1") console.log(`cluster: rig directory ${cluster.dir}`);
  const result: SizeResult = { sidecars, sessions, relayMs: [], relaySpreadMs: [], relayViaOwnerMs: [], relayViaOtherMs: [], relayFirstLinesMs: [], relayLaterLinesMs: [], relayStaggeredMs: [], ownerAckMs: [], forwardedAckMs: [], failoverS: undefined, notes: [] };
  try {
    // Per node: one driver socket for commands, and watchers of at most 6 sessions each (a
    // reconnecting socket re-subscribes to all it watches at once, within the 8 commands a tab may run).
    const clients = await Promise.all(cluster.nodes.map((node) => cluster.client(`bench-${node.id}`, node)));
    const clientOf = (node: ClusterNode) => clients[cluster.nodes.indexOf(node)]!;
    const perWatcher = 6;
    const watchers: ChaosClient[] = [];
    const nodeOf = new Map<ChaosClient, ClusterNode>(clients.map((c, i) => [c, cluster.nodes[i]!]));
    for (const node of cluster.nodes) {
      for (let k = 0; k * perWatcher < sessions; k++) {
        const watcher = await cluster.client(`watch-${node.id}-${k}`, node);
        watchers.push(watcher);
        nodeOf.set(watcher, node);
      }
    }
    // relay: every watcher stamps the stream lines it receives (into the phase being measured)
    let receipts = result.relayMs;
    // owners are known once the sessions are warm; before, receipts are not split
    const owners = new Map<string, ClusterNode | undefined>();
    for (const watcher of watchers) {
      onSessionEvents(watcher.socket, (event) => {
        const stamp = (event.payload as { bench_t_us?: unknown } | null)?.bench_t_us;
        if (typeof stamp !== "number") return;
        const ms = (nowUs() - stamp) / 1000;
        receipts.push(ms);
        if (receipts !== result.relayMs) return;
        // the fake CLI's deltas are "0 ", "1 ", …: the line's place in its turn
        const place = Number.parseInt(String((event.payload as { event?: { delta?: { text?: unknown } } }).event?.delta?.text), 10);
        (place < 3 ? result.relayFirstLinesMs : result.relayLaterLinesMs).push(ms);
        if (!owners.has(event.sessionId)) return;
        (owners.get(event.sessionId) === nodeOf.get(watcher) ? result.relayViaOwnerMs : result.relayViaOtherMs).push(ms);
      });
    }
    // sessions, created round-robin through the nodes, each warmed up (its CLI spawned) by a turn
    const ids: string[] = [];
    for (let i = 0; i < sessions; i++) ids.push(await cluster.createSession(clients[i % clients.length]!, "stream"));
    const perNode = watchers.length / cluster.nodes.length;
    await Promise.all(
      cluster.nodes.map(async (_, n) => {
        for (let i = 0; i < ids.length; i++) await watchers[n * perNode + Math.floor(i / perWatcher)]!.watch(ids[i]!);
      }),
    );
    await pool(ids, 10, (id) => promptAndWait(cluster, clients[ids.indexOf(id) % clients.length]!, id, "warm up", 120_000));
    for (const id of ids) owners.set(id, await cluster.ownerOf(id));
    const owned = cluster.nodes.map((n) => ids.filter((id) => owners.get(id) === n).length);
    result.notes.push(`leases per node after warm-up: ${cluster.nodes.map((n, i) => `${n.id}=${owned[i]}`).join(" ")}`);

    // the sidecars' CPU while every session is idle (warm, watched, nothing streaming): what the
    // cluster costs before any line is relayed (heartbeats, leases, the relay's reads, sweeps)
    const sidecarCpuMs = () => cluster.nodes.reduce((sum, node) => sum + (node.process.pid ? processCpuMs(node.process.pid) : 0), 0);
    await new Promise((r) => setTimeout(r, 2000));
    const idleFrom = sidecarCpuMs();
    const idleStart = performance.now();
    await new Promise((r) => setTimeout(r, 5000));
    const idleCpuShare = (sidecarCpuMs() - idleFrom) / (performance.now() - idleStart) / cluster.nodes.length;
    result.notes.push(`idle sidecars (${sessions} warm sessions, watched): ${fmt(idleCpuShare * 1000)} ms of CPU a second each`);

    // relay: every session streams `lines` lines 100 ms apart, all at once. The bench's own
    // event-loop delay over the relay phases is reported: a receipt waits in it too.
    const benchLag = monitorEventLoopDelay({ resolution: 5 });
    benchLag.enable();
    // the sidecars' own CPU (every thread, no child) over the relay phases and their turns' ends:
    // a steadier figure than the relay's tail when comparing two builds on a busy host
    const cpuBefore = sidecarCpuMs();
    if (profileDir && profileWindow !== "boot") for (const node of cluster.nodes) if (node.process.pid) process.kill(node.process.pid, "SIGUSR2");
    result.relayMs.length = 0;
    result.relayViaOwnerMs.length = 0;
    result.relayViaOtherMs.length = 0;
    result.relayFirstLinesMs.length = 0;
    result.relayLaterLinesMs.length = 0;
    // the whole machine's CPU over each relay phase, by part (`phaseCost`)
    let phaseStart = partsCpu(cluster);
    await Promise.all(
      ids.map((id, i) =>
        send(clients[i % clients.length]!, "session:prompt", { sessionId: id, text: `stream ${lines} 100`, commandId: randomUUID() }),
      ),
    );
    const expected = sessions * lines * cluster.nodes.length;
    await until(() => result.relayMs.length >= expected, lines * 100 + 60_000, "every stream line at every client", 200).catch(
      () => result.notes.push(`relay: ${result.relayMs.length} of ${expected} receipts`),
    );
    result.notes.push(phaseCost("in phase", phaseStart, partsCpu(cluster), sessions, lines, true));
    if (profileDir && profileWindow !== "phases") {
      for (const node of cluster.nodes) if (node.process.pid) process.kill(node.process.pid, "SIGUSR2");
      await new Promise((r) => setTimeout(r, 3000));
    }
    // relay again, each session's first line delayed by its share of the period (i/sessions of
    // 100 ms): the same rate, not in phase, as real sessions are; reported apart (relay_spread_*)
    await until(async () => (await Promise.all(ids.map((id) => resultCount(cluster, id)))).every((n) => n >= 2), 60_000, "the in-phase streams' results", 200);
    receipts = result.relaySpreadMs;
    phaseStart = partsCpu(cluster);
    await Promise.all(
      ids.map((id, i) =>
        send(clients[i % clients.length]!, "session:prompt", {
          sessionId: id,
          text: `stream ${lines} 100 ${Math.floor((i * 100) / ids.length)}`,
          commandId: randomUUID(),
        }),
      ),
    );
    await until(() => result.relaySpreadMs.length >= expected, lines * 100 + 60_000, "every spread stream line at every client", 200).catch(
      () => result.notes.push(`relay spread: ${result.relaySpreadMs.length} of ${expected} receipts`),
    );
    result.notes.push(phaseCost("spread", phaseStart, partsCpu(cluster), sessions, lines));
    // relay a third time, the turns themselves started one after another over a turn's length
    // (people do not press Enter in the same 100 ms): what the relay costs without the burst of
    // turn starts the two phases above meet (relay_staggered_*; not the targets' headline)
    await until(async () => (await Promise.all(ids.map((id) => resultCount(cluster, id)))).every((n) => n >= 3), 60_000, "the spread streams' results", 200);
    receipts = result.relayStaggeredMs;
    phaseStart = partsCpu(cluster);
    const turnMs = lines * 100;
    await Promise.all(
      ids.map(async (id, i) => {
        await new Promise((r) => setTimeout(r, Math.floor((i * turnMs) / ids.length)));
        await send(clients[i % clients.length]!, "session:prompt", { sessionId: id, text: `stream ${lines} 100`, commandId: randomUUID() });
      }),
    );
    await until(() => result.relayStaggeredMs.length >= expected, lines * 100 + 60_000, "every staggered stream line at every client", 200).catch(
      () => result.notes.push(`relay staggered: ${result.relayStaggeredMs.length} of ${expected} receipts`),
    );
    result.notes.push(phaseCost("staggered", phaseStart, partsCpu(cluster), sessions, lines));
    receipts = [];
    benchLag.disable();
    result.notes.push(
      `the bench's own event-loop delay during the relay (its ${watchers.length} watcher sockets): p50 ${fmt(benchLag.percentile(50) / 1e6)} ms p99 ${fmt(benchLag.percentile(99) / 1e6)} ms max ${fmt(benchLag.max / 1e6)} ms`,
    );
    // the turns' ends (results, cost rows, snapshots) settled first: forwarding is timed on idle sessions
    await until(async () => (await Promise.all(ids.map((id) => resultCount(cluster, id)))).every((n) => n >= 4), 60_000, "the staggered streams' results", 200).catch(
      () => result.notes.push("forward: measured before every staggered stream had ended"),
    );
    const relayCpuMs = sidecarCpuMs() - cpuBefore;
    if (profileDir && profileWindow === "phases") {
      for (const node of cluster.nodes) if (node.process.pid) process.kill(node.process.pid, "SIGUSR2");
      await new Promise((r) => setTimeout(r, 3000));
    }
    result.notes.push(
      `the sidecars' CPU over the three relay phases (${sessions * lines * 3} lines, ${sessions * 3} turns): ${fmt(relayCpuMs / 1000)} s, ${fmt(relayCpuMs / (sessions * lines * 3), 3)} ms a line`,
    );

    // forward_extra: the same command through the owner and through another node, alternating
    if (cluster.nodes.length > 1) {
      const sample = ids.filter((id) => owners.get(id) !== undefined).slice(0, 40);
      let mode = 0;
      for (const id of sample) {
        const owner = owners.get(id)!;
        const other = cluster.nodes.find((n) => n !== owner)!;
        for (const [node, into] of [
          [owner, result.ownerAckMs],
          [other, result.forwardedAckMs],
        ] as const) {
          mode += 1;
          const t0 = performance.now();
          const ack = await send(clientOf(node), "session:set-mode", {
            sessionId: id,
            mode: mode % 2 === 0 ? "default" : "acceptEdits",
            commandId: randomUUID(),
          });
          if (ack?.ok) into.push(performance.now() - t0);
        }
      }
      if (sample.length === 0) result.notes.push("forward: no session has a lease (leases not in this build?)");
    }

    // failover: kill -9 of the busiest node (with one sidecar: the supervisor restarts it), then at
    // once a prompt for each of its sessions through the clients of the survivors, sent again
    // until accepted (same commandId while unanswered, a new one after a refusal). failover = the last session resumable (its prompt's ack ok:
    // the lease taken, the CLI started with --resume, the prompt handed to it); answered = the
    // last one answered (a result); adopted = a survivor adopted the dead node (its row marked,
    // its leases gone), which a session's takeover does not wait for.
    const victimIndex = owned.indexOf(Math.max(...owned));
    const victim = cluster.nodes[victimIndex]!;
    const orphaned = cluster.nodes.length > 1 ? ids.filter((id) => owners.get(id) === victim) : ids;
    const survivors = [...clients, ...watchers].filter((c) => nodeOf.get(c) !== victim || cluster.nodes.length === 1);
    const before = victim.process.pid;
    const t0 = performance.now();
    let adopted: Promise<void> = Promise.resolve();
    if (cluster.nodes.length > 1) {
      await cluster.kill9(victim);
      adopted = (async () => {
        const settled = async () =>
          (await cluster.db.sidecarNode.findUnique({ where: { id: victim.id } }))?.adoptedAt != null &&
          (await cluster.db.sessionLease.count({ where: { ownerId: victim.id } })) === 0;
        await until(settled, 60_000, `${victim.id} adopted`, 50);
        result.adoptedS = (performance.now() - t0) / 1000;
      })();
    } else {
      victim.process.kill9();
      void victim.process.waitRestarted(before).catch(() => undefined);
    }
    const resumable: number[] = [];
    const answered: number[] = [];
    const refusals = new Map<string, number>();
    /** The first message of each refusal code other than the expected rate limit. */
    const refusalTexts = new Map<string, string>();
    const unanswered: string[] = [];
    await Promise.all(
      orphaned.map(async (id, i) => {
        const client = survivors[i % survivors.length]!;
        const resultsBefore = await resultCount(cluster, id);
        // the same commandId again only when the answer was lost; a refusal is final for its
        // commandId (a retry is answered with it again), so the next try is a new prompt, as a
        // person sends once the page shows the refusal
        let commandId = randomUUID();
        for (let attempt = 0; ; attempt++) {
          // as the browser: a command goes out once the socket is connected again (one sidecar:
          // after the restart) and the page has its sessions back, not into socket.io's buffer,
          // whose late copies would take slots, nor beside a tab's six resubscribes (a tab may run
          // 8 commands; a browser tab watches one session, a watcher here six)
          await client.ready(60_000).catch(() => undefined);
          const ack = await send(client, "session:prompt", { sessionId: id, text: "after failover", commandId });
          if (ack?.ok) break;
          const why = ack ? (ack.error as { code?: string } | undefined)?.code ?? "error" : "no ack";
          refusals.set(why, (refusals.get(why) ?? 0) + 1);
          const text = (ack?.error as { message?: string } | undefined)?.message;
          if (text && why !== "rate_limited" && !refusalTexts.has(why)) refusalTexts.set(why, `${text} (${id}, attempt ${attempt + 1})`);
          if (ack) commandId = randomUUID();
          if (attempt >= 40) throw new Error(`the prompt to ${id} was never accepted (${why})`);
          await new Promise((r) => setTimeout(r, Math.min(1_000, 250 * (attempt + 1))));
        }
        resumable.push((performance.now() - t0) / 1000);
        try {
          await until(async () => (await resultCount(cluster, id)) > resultsBefore, 120_000, `a result in ${id}`, 100);
          answered.push((performance.now() - t0) / 1000);
        } catch {
          // accepted and never answered: what the session's log says since the kill, for the report
          unanswered.push(`${id}: ${await logSince(cluster, id, commandId)}`);
        }
      }),
    );
    result.failoverS = Math.max(...resumable);
    if (profileDir && cluster.nodes.length === 1) {
      // the restarted sidecar's profile, from its boot through the failover (a file of its own pid)
      const pid = victim.process.pid;
      if (pid && pid !== before) process.kill(pid, "SIGUSR2");
      await new Promise((r) => setTimeout(r, 3000));
    }
    result.answeredS = unanswered.length > 0 ? undefined : Math.max(...answered);
    if (unanswered.length > 0) result.notes.push(`ACCEPTED BUT NEVER ANSWERED (120 s): ${unanswered.join(" | ")}`);
    await adopted;
    result.notes.push(
      `failover: ${orphaned.length} sessions of ${victim.id}; resumable p50 ${fmt(percentile(resumable, 50), 1)} s, last ${fmt(result.failoverS, 1)} s; ` +
        `answered last ${fmt(result.answeredS, 1)} s; adopted ${fmt(result.adoptedS, 1)} s; prompts refused on the way: ${[...refusals].map(([k, v]) => `${k}=${v}`).join(" ") || "none"}` +
        [...refusalTexts].map(([k, v]) => `; ${k}: ${v}`).join(""),
    );
  } finally {
    await cluster.close();
  }
  return result;
}

export default async function run(): Promise<void> {
  const reason = await clusterUnavailableReason();
  if (reason !== undefined) {
    console.log(`cluster: skipped: ${reason}`);
    process.exitCode = 2;
    return;
  }
  const sessions = Number(process.env.CLUSTER_SESSIONS ?? 150);
  const lines = Number(process.env.CLUSTER_LINES ?? 40);
  const sizes = (process.env.CLUSTER_SIZES ?? "3,1").split(",").map(Number);
  const lineOf: string[] = [];
  for (const sidecars of sizes) {
    const r = await measure(sidecars, sessions, lines);
    const forward =
      r.forwardedAckMs.length > 0 && r.ownerAckMs.length > 0
        ? percentile(r.forwardedAckMs, 50)! - percentile(r.ownerAckMs, 50)!
        : undefined;
    console.log(
      `cluster (${sidecars} sidecar${sidecars === 1 ? "" : "s"}): relay receipts=${r.relayMs.length} p50=${fmt(percentile(r.relayMs, 50))} ms ` +
        `p99=${fmt(percentile(r.relayMs, 99))} ms max=${fmt(percentile(r.relayMs, 100))} ms; spread over the period: p50=${fmt(percentile(r.relaySpreadMs, 50))} ms ` +
        `p99=${fmt(percentile(r.relaySpreadMs, 99))} ms; turns started one after another: p50=${fmt(percentile(r.relayStaggeredMs, 50))} ms ` +
        `p99=${fmt(percentile(r.relayStaggeredMs, 99))} ms; in phase, received through the owner: p50=${fmt(percentile(r.relayViaOwnerMs, 50))} ms ` +
        `p99=${fmt(percentile(r.relayViaOwnerMs, 99))} ms, through another node: p50=${fmt(percentile(r.relayViaOtherMs, 50))} ms ` +
        `p99=${fmt(percentile(r.relayViaOtherMs, 99))} ms; in phase, a turn's first 3 lines: p50=${fmt(percentile(r.relayFirstLinesMs, 50))} ms ` +
        `p99=${fmt(percentile(r.relayFirstLinesMs, 99))} ms, its later lines: p50=${fmt(percentile(r.relayLaterLinesMs, 50))} ms ` +
        `p99=${fmt(percentile(r.relayLaterLinesMs, 99))} ms; set-mode ack p50 via owner ` +
        `${fmt(percentile(r.ownerAckMs, 50))} ms, via another node ${fmt(percentile(r.forwardedAckMs, 50))} ms; ${r.notes.join("; ")}; ` +
        `machine load average ${os.loadavg()[0]!.toFixed(1)}`,
    );
    lineOf.push(
      `cluster: sidecars=${sidecars} sessions=${sessions} relay_p50_ms=${fmt(percentile(r.relayMs, 50))} relay_p99_ms=${fmt(percentile(r.relayMs, 99))} ` +
        `forward_extra_p50_ms=${fmt(forward)} failover_s=${fmt(r.failoverS, 1)} answered_s=${fmt(r.answeredS, 1)} ` +
        `relay_spread_p50_ms=${fmt(percentile(r.relaySpreadMs, 50))} relay_spread_p99_ms=${fmt(percentile(r.relaySpreadMs, 99))} ` +
        `relay_staggered_p50_ms=${fmt(percentile(r.relayStaggeredMs, 50))} relay_staggered_p99_ms=${fmt(percentile(r.relayStaggeredMs, 99))}`,
    );
  }
  for (const line of lineOf) console.log(line);
}
