/**
 * The sidecar process: Socket.IO server, and (as later layers land) the session supervisor,
 * approval queues, event log writer and cost accounting. Wiring only; the parts live in
 * server/sidecar/{process,session,socket}.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { getDb } from "@/server/db/client";
import { DEFAULT_DATABASE_URL } from "@/server/db/database-url";
import { listRecordedPids, markOrphanedSessionsStopped } from "@/server/db/sessions";
import { startWalCheckpointer } from "@/server/db/wal-checkpointer";
import { getEnv, publicOriginsOf, publicUrlOf, requireSetting } from "@/server/env/env";
import { createAdmission } from "@/server/sidecar/process/admission";
import { claudeVersion, resolveClaudeBinary } from "@/server/sidecar/process/claude-binary";
import { reapOrphans } from "@/server/sidecar/process/reap-orphans";
import { resolveSidecarId } from "@/server/sidecar/cluster/sidecar-identity";
import { NodeHeartbeat } from "@/server/sidecar/cluster/node-heartbeat";
import { LeaseKeeper } from "@/server/sidecar/cluster/session-leases";
import { Adoption } from "@/server/sidecar/cluster/adoption";
import { chooseSandbox, findOnPath, probeBwrap, SandboxUnavailableError } from "@/server/sidecar/process/sandbox";
import { openSessionCaps } from "@/server/sidecar/process/session-rlimit";
import { diagnoseSandbox, readSandboxHostFacts, type SandboxDiagnosis } from "@/server/sidecar/process/sandbox-diagnosis";
import { createIsolationGate, isolationPolicyOf } from "@/server/domain/session/isolation-policy";
import { readTenancy } from "@/server/db/tenancy";
import { startCredentialProxy, type ProxyTraceStage } from "@/server/sidecar/credential-proxy/credential-proxy";
import { ledgerBudget } from "@/server/sidecar/credential-proxy/ledger-budget";
import { createSessionNetwork } from "@/server/sidecar/network/session-network";
import { sandboxStatusFile, type SandboxStatus } from "@/server/shared/sandbox-status";
import { supervisorConfigFromEnv } from "@/server/sidecar/process/supervisor-config";
import { SessionHub } from "@/server/sidecar/session/session-hub";
import { eventLogStoreOf, SessionEventWriter } from "@/server/sidecar/session/session-event-writer";
import { createSidecarMetrics, sidecarHttpRoutes } from "@/server/sidecar/metrics/sidecar-metrics";
import { childTrees } from "@/server/sidecar/metrics/process-tree";
import { createSessionRunner } from "@/server/sidecar/session/session-runner";
import { createSocketServer } from "@/server/sidecar/socket/create-socket-server";
import { attachSessionSockets, sessionRoom } from "@/server/sidecar/socket/session-socket";
import { attachSessionControlSockets } from "@/server/sidecar/socket/session-controls-socket";
import { attachSessionMcpSockets } from "@/server/sidecar/socket/session-mcp-socket";
import { loadWorkspaceMcpServers, resetMcpRunRoot } from "@/server/sidecar/session/mcp-config";
import { attachSessionManageSockets } from "@/server/sidecar/socket/session-manage-socket";
import { attachSessionPageSockets } from "@/server/sidecar/socket/session-pages-socket";
import { attachRoleWatch } from "@/server/sidecar/socket/role-watch";
import { SessionManagement } from "@/server/sidecar/session/session-management";
import { ApprovalService } from "@/server/sidecar/approval/approval-service";
import { attachApprovalSockets, notifyUsersOf } from "@/server/sidecar/socket/approval-socket";
import { RevocationSweep } from "@/server/sidecar/socket/revocation-sweep";
import { TurnSnapshots } from "@/server/sidecar/session/turn-snapshots";
import { createSpawnHelper } from "@/server/sidecar/process/spawn-helper";
import { createDoorLauncher, DoorPool, doorPoolDefaults } from "@/server/workspace-agent";
import { attachChangesSockets } from "@/server/sidecar/socket/changes-socket";
import { PushSender, vapidSubjectFor } from "@/server/push/push-sender";
import { armFaults } from "@/server/sidecar/fault-injection";
import { startSlowConsumerSweep } from "@/server/sidecar/socket/slow-consumer-sweep";
import { createDbClusterDirectory } from "@/server/sidecar/cluster/cluster-directory";
import { feedWithCommands } from "@/server/sidecar/cluster/command-forwarder";
import { startClusterForwarding } from "@/server/sidecar/cluster/cluster-forwarding";
import { settleUnansweredPrompts } from "@/server/sidecar/session/undelivered-prompts";
import { loadVapidKeys } from "@/server/push/vapid-keys";
import { attachTurnPushes, notifyWithPush } from "@/server/sidecar/push/push-notifier";
import {
  createLatencyTrace,
  traceBeforeSnapshots,
  traceEmittedEvent,
  traceReceivedPrompts,
  tracedDecider,
  tracedEventStore,
  tracedNotify,
  type LatencyStage,
} from "@/server/sidecar/metrics/latency-trace";

const log = pino({ name: "sidecar", level: getEnv().LOG_LEVEL });

async function main(): Promise<void> {
  const env = getEnv();
  const secret = requireSetting(env, "NEXTAUTH_SECRET");
  // The chaos suite's fault points (refused in production); inert when CONDUIT_FAULT is unset.
  const fault = armFaults();
  if (fault !== undefined) log.warn({ fault }, "fault injection armed (tests only)");

  const cliPath = resolveClaudeBinary();
  const version = await claudeVersion(cliPath);
  log.info({ cliPath, version }, "claude CLI found");

  // Isolation first: with CONDUIT_SANDBOX=bwrap and no working bubblewrap, nothing else starts.
  const { sandbox, warning } = await chooseSandbox(env.CONDUIT_SANDBOX, cliPath).catch(async (err: unknown) => {
    if (err instanceof SandboxUnavailableError) {
      const diagnosis = await diagnoseBwrap();
      throw new SandboxUnavailableError(`${err.message} ${diagnosis.problem} Fix: ${diagnosis.fix}`);
    }
    throw err;
  });
  // `auto` without a working sandbox fails closed: one tenant only (isolation-policy.ts); `off` is the operator's choice.
  const isolationPolicy = isolationPolicyOf(env.CONDUIT_SANDBOX, sandbox.mode);
  const diagnosis = isolationPolicy === "single-tenant" ? await diagnoseBwrap() : undefined;
  if (warning !== undefined) {
    log.warn(
      { sandbox: "off", setting: env.CONDUIT_SANDBOX, policy: isolationPolicy, diagnosis },
      `SESSIONS ARE NOT ISOLATED: ${warning}. Sessions start only while this instance has one account (and none in a workspace with other members). Fix: ${diagnosis?.fix ?? "see Admin → Instance"}`,
    );
  } else if (sandbox.mode === "off") log.warn({ sandbox: "off", setting: env.CONDUIT_SANDBOX, policy: isolationPolicy }, "SESSIONS ARE NOT ISOLATED: CONDUIT_SANDBOX=off, the operator's choice");
  else log.info({ sandbox: sandbox.mode, setting: env.CONDUIT_SANDBOX }, "CLI children sandboxed");
  // git runs in the workspace doors (server/workspace-agent), not here: this process spawns a door
  // once per workspace and idle period, so it needs no exec helper for git any more (a spawn from
  // this process blocks its loop ~25 ms while the kernel copies its page tables).
  const spawnHelper = createSpawnHelper({ onFallback: (reason) => log.warn({ reason }, "spawn helper unavailable: CLIs are spawned by the sidecar itself") });
  // CONDUIT_LATENCY_TRACE: each stage of a turn and an approval as a stderr line (bench/browser-turn).
  const latency = createLatencyTrace(env.CONDUIT_LATENCY_TRACE);
  // The operator's credential stays in this process; each CLI child gets a token for this proxy.
  const credentialProxy = await startCredentialProxy({
    ...(latency.enabled ? { trace: (stage: ProxyTraceStage, fields: { sessionId: string; path: string }) => latency.mark(stage, fields) } : {}),
    upstream: env.ANTHROPIC_BASE_URL ?? "https://api.anthropic.com",
    credential: { apiKey: env.ANTHROPIC_API_KEY, authToken: process.env.ANTHROPIC_AUTH_TOKEN || undefined },
    log: (fields, message) => log.warn({ component: "credential-proxy", ...fields }, message),
    // Fair limits per session, and the monthly budgets with the spend it metered (402 once spent).
    limits: { maxConcurrent: env.CONDUIT_PROXY_MAX_CONCURRENT, maxPerMinute: env.CONDUIT_PROXY_MAX_PER_MINUTE },
    budget: ledgerBudget(getDb()),
  });
  log.info({ url: credentialProxy.url }, "credential proxy listening");
  // Narrowed workspaces: each spawn reaches the proxy (and, for an allow-list, a filtering proxy) by Unix sockets.
  const network = createSessionNetwork({
    credentialProxyPort: credentialProxy.port,
    log: (fields, message) => log.warn({ component: "egress-proxy", ...fields }, message),
  });

  const db = getDb();
  // The event log writes every CLI line: SQLite's checkpoints must not stall those commits.
  const checkpointer = await startWalCheckpointer(db, process.env.DATABASE_URL || DEFAULT_DATABASE_URL, { log });
  // This sidecar's node id (configured, or kept in DATA_DIR/sidecar-id): children an earlier run
  // of it left behind are reaped, and their rows stop claiming a live child (a prompt resumes the
  // conversation). Rows of releases that named the node by its host name are cleaned up once.
  const sidecarId = resolveSidecarId({ configured: env.CONDUIT_SIDECAR_ID, dataDir: env.CONDUIT_DATA_DIR });
  // Its node row first: a second live process with this id is refused before it reaps anything.
  let liveSessionCount = () => 0;
  const heartbeat = new NodeHeartbeat({ db, selfId: sidecarId, url: null, liveSessions: () => liveSessionCount(), log: log.child({ component: "cluster" }) });
  await heartbeat.register();
  const leases = new LeaseKeeper({ db, selfId: sidecarId, log: log.child({ component: "leases" }) });
  // A memory and process cap per CLI child: cgroups, else rlimits through prlimit (session-rlimit.ts);
  // neither usable here: one warning, sessions run uncapped.
  let countOomKills = (_count: number) => {};
  const { confinement: cgroups, status: caps } = openSessionCaps(
    {
      sidecarId,
      caps: { memoryMb: env.CONDUIT_SESSION_MEMORY_MB, pidsMax: env.CONDUIT_SESSION_PIDS_MAX },
      onOomKills: (count) => countOomKills(count),
    },
    { fileSizeMb: env.CONDUIT_SESSION_FILE_MB, sessionMax: env.CONDUIT_SESSION_MAX },
  );
  if (cgroups === undefined) log.warn({ caps }, `SESSIONS HAVE NO MEMORY OR PROCESS CAP: ${caps.reason}`);
  else if (cgroups.kind === "rlimit") log.warn({ caps }, `CLI children capped by rlimits only (per process and per user, not per session): ${caps.reason}`);
  else log.info({ caps }, "CLI children capped (cgroups)");
  writeSandboxStatus(env.CONDUIT_DATA_DIR, {
    mode: sandbox.mode,
    setting: env.CONDUIT_SANDBOX,
    ...(warning !== undefined ? { warning } : {}),
    at: new Date().toISOString(),
    credentialProxy: true,
    caps,
    isolation: { policy: isolationPolicy, ...(diagnosis !== undefined ? { diagnosis } : {}) },
  });
  const legacyId = os.hostname();
  const reaped = await reapOrphans([...(await listRecordedPids(db, sidecarId)), ...(await listRecordedPids(db, legacyId))], { cliPath });
  // ...and whatever an earlier run's cgroups still hold (a setsid grandchild included) is killed.
  const leftoverCgroups = (await cgroups?.cleanLeftovers()) ?? { removed: [], killed: 0 };
  if (leftoverCgroups.removed.length > 0) log.info(leftoverCgroups, "removed cgroups an earlier sidecar left");
  const stale = (await markOrphanedSessionsStopped(db, sidecarId)) + (await markOrphanedSessionsStopped(db, legacyId));
  // leases an earlier run of this node held: its children are gone, the sessions are free
  await leases.releaseAll();
  // MCP configs an earlier sidecar's children left (they hold secrets): gone before any spawn
  const mcpRunRoot = path.resolve(env.CONDUIT_DATA_DIR, "run", "mcp");
  resetMcpRunRoot(mcpRunRoot);
  if (reaped.reaped.length > 0 || stale > 0) log.info({ reaped: reaped.reaped, survived: reaped.survived, stale }, "cleaned up after an earlier sidecar");

  // Fair shares: one person's (or workspace's) sessions cannot fill the sidecar (admission.ts).
  const admitting = createAdmission({
    maxLive: env.CONDUIT_SESSION_MAX,
    maxPerUser: env.CONDUIT_SESSION_MAX_PER_USER,
    maxPerWorkspace: env.CONDUIT_SESSION_MAX_PER_WORKSPACE,
    minFreeBytes: env.CONDUIT_MIN_FREE_MB * 1024 * 1024,
    ownerOf: (sessionId) => hub.slotOwner(sessionId),
  });
  // Before every spawn: no sandbox under `auto` serves one tenant only.
  const isolationGate = createIsolationGate({
    policy: isolationPolicy,
    tenancy: (sessionId) => readTenancy(db, sessionId),
    ...(diagnosis !== undefined ? { fix: diagnosis.fix } : {}),
    log: (fields, message) => log.warn({ component: "isolation", ...fields }, message),
  });
  liveSessionCount = () => admitting.liveCount;
  let approvalsPending = () => 0;
  const metrics = createSidecarMetrics({
    cliTrees: () => childTrees(process.pid, "/proc", { spawner: spawnHelper.pid() }),
    liveSessions: () => admitting.liveCount,
    approvalsPending: () => approvalsPending(),
    proxyTotals: () => credentialProxy.totals(),
  });
  countOomKills = (count) => metrics.oomKills.inc(count);
  const admission = metrics.countedAdmission(admitting);
  const supervisor = supervisorConfigFromEnv(env);
  const runnerLog = log.child({ component: "runner" });
  const server = createSocketServer({
    secret,
    allowedOrigins: publicOriginsOf(publicUrlOf(env)),
    findUser: async (id) => {
      const user = await db.user.findUnique({ where: { id } });
      return user ? { id: user.id, email: user.email, name: user.name, disabledAt: user.disabledAt, sessionVersion: user.sessionVersion } : undefined;
    },
    log,
    httpRoutes: sidecarHttpRoutes({ metrics, sidecarId, liveSessions: () => admitting.liveCount, metricsToken: env.CONDUIT_METRICS_TOKEN, log }),
  });
  // Approvals an earlier run left pending can never be answered: their CLI is gone.
  // Web Push to subscribed browsers: approvals routed to a user, turns finished while away.
  const pushLog = log.child({ component: "push" });
  const push = new PushSender({ db, keys: loadVapidKeys(env.CONDUIT_DATA_DIR), subject: vapidSubjectFor(publicUrlOf(env)), log: pushLog });
  const approvals = new ApprovalService({
    db,
    log: log.child({ component: "approvals" }),
    notify: tracedNotify(latency, notifyWithPush(notifyUsersOf(server.io), push)),
    listOthersPending: env.REDIS_URL !== undefined,
    ...(latency.enabled ? { mark: (stage: LatencyStage, fields: Record<string, string | undefined>) => latency.mark(stage, fields) } : {}),
  });
  approvalsPending = () => approvals.pendingCount;
  const leftovers = (await approvals.cancelLeftovers(sidecarId)) + (await approvals.cancelLeftovers(legacyId));
  if (leftovers > 0) log.info({ leftovers }, "cancelled approvals left pending by an earlier sidecar");
  // each turn's file changes, from snapshots of the workspace's shadow repository (DATA_DIR/shadow)
  // Taken in doors of their own (server/workspace-agent), which end after ten idle minutes rather
  // than the default minute: such a door holds the work-tree watchers that spare each turn's
  // snapshots a full scan, and a person often pauses longer than a minute between two prompts.
  // Ten minutes is the watchers' own idle time (change-watcher.ts), so a door outlives its use no
  // longer than they would. Not a keep-alive per live session: that would hold a door and its
  // watches for sessions nobody types in. Not the process's shared pool either: its other doors
  // (git, settings, approval reads) hold nothing worth keeping. A door that ends anyway costs
  // its work tree's next snapshot one scan.
  const snapshotDoors = new DoorPool({ ...doorPoolDefaults, launcher: () => createDoorLauncher({ setting: env.CONDUIT_SANDBOX }), idleMs: 10 * 60_000 });
  const snapshots = new TurnSnapshots({ db, dataDir: path.resolve(env.CONDUIT_DATA_DIR), log: log.child({ component: "snapshots" }), door: snapshotDoors });
  traceBeforeSnapshots(latency, snapshots);
  // The hub's event writer, with its inserts timed for /metrics (the hub then leaves closing it to us).
  const writer = new SessionEventWriter(tracedEventStore(latency, metrics.timedStore(eventLogStoreOf(db))), log);
  // Prompts the previous sidecar accepted but no CLI answered get a visible end (never dropped silently).
  const unanswered = [
    ...(await settleUnansweredPrompts({ db, writer, sidecarId, log })),
    ...(await settleUnansweredPrompts({ db, writer, sidecarId: legacyId, log })),
  ];
  if (unanswered.length > 0) log.info({ prompts: unanswered.length }, "settled prompts an earlier sidecar left unanswered");
  const hub: SessionHub = new SessionHub({
    db,
    writer,
    turnSnapshots: snapshots,
    configRoot: path.resolve(env.CONDUIT_DATA_DIR, "claude-config"),
    mcpServersOf: (workspaceId) => loadWorkspaceMcpServers(db, env.CONDUIT_DATA_DIR, workspaceId, (fields, message) => log.warn(fields, message)),
    sidecarId,
    leases,
    log,
    // a browser in the session's room, on any sidecar (the adapter asks the others): its idle CLI stays warm
    watched: async (sessionId) => (await server.io.in(sessionRoom(sessionId)).fetchSockets()).length > 0,
    // an idle CLI past the cull time may give its slot to anyone; before it, only to its own person's sessions
    idleCullMs: supervisor.idleCullMs,
    eventsMax: env.CONDUIT_SESSION_EVENTS_MAX,
    decidePermission: tracedDecider(latency, approvals.decidePermission),
    // What each result recorded is no longer the proxy's unreported spend.
    onTurnCost: (sessionId, turn) =>
      credentialProxy.reportResult(sessionId, {
        usd: turn.usd,
        inputTokens: turn.models.reduce((n, m) => n + m.inputTokens, 0),
        outputTokens: turn.models.reduce((n, m) => n + m.outputTokens, 0),
        cacheReadTokens: turn.models.reduce((n, m) => n + m.cacheReadTokens, 0),
        cacheWriteTokens: turn.models.reduce((n, m) => n + m.cacheWriteTokens, 0),
      }),
    createRunner: (options, decidePermission) =>
      createSessionRunner(options, {
        cliPath,
        decidePermission,
        admission,
        // full: an idle CLI of the same person's, or one idle past the cull time, gives its slot (its next prompt resumes it)
        reclaimSlot: (forSessionId, reason): Promise<boolean> => hub.reclaimIdleChild(forSessionId, reason),
        beforeSpawn: isolationGate,
        config: supervisor,
        logger: runnerLog,
        sandbox,
        credentials: credentialProxy,
        network,
        mcpRunRoot,
        cgroups,
        spawn: spawnHelper.spawn,
      }),
  });

  // Each heartbeat renews this node's leases (a lost one fences its runner), then adopts dead peers' sessions.
  const adoption = new Adoption({
    db,
    selfId: sidecarId,
    writer,
    log: log.child({ component: "adoption" }),
    reap: (pids) => reapOrphans(pids, { cliPath }),
    notify: notifyUsersOf(server.io),
    onAdopted: async (ids) => void (await Promise.all(ids.map((id) => hub.dropEntry(id)))),
  });
  leases.gateClaims((sessionId) => adoption.settled(sessionId));
  heartbeat.afterBeat("leases", () => leases.renew());
  heartbeat.afterBeat("adoption", () => adoption.run());
  // REDIS_URL: commands reach the sidecar that runs their session, events reach every sidecar.
  const cluster = env.REDIS_URL
    ? await startClusterForwarding({ redisUrl: env.REDIS_URL, secret, io: server.io, db, directory: createDbClusterDirectory(db, sidecarId), hub, approvals, log, observeForward: (seconds, method) => metrics.forward.observe({ method }, seconds), holds: (sessionId) => leases.holds(sessionId) })
    : undefined;
  attachSessionSockets(server.io, { hub: cluster ? feedWithCommands(hub, cluster.commands) : hub, db, log, remoteSubscribe: cluster?.remote.subscribe, clusterPresence: cluster !== undefined });
  // After the socket layer's listener: by now the event has been emitted to its room.
  hub.onDidEmitEvent((event) => metrics.relay.observe(Math.max(0, Date.now() - Date.parse(event.at)) / 1000));
  if (latency.enabled) hub.onDidEmitEvent((event) => traceEmittedEvent(latency, event));
  if (latency.enabled) traceReceivedPrompts(latency, server.io);
  attachSessionControlSockets(server.io, { hub, db, log, router: cluster?.router });
  attachSessionMcpSockets(server.io, { hub, db, log, router: cluster?.router });
  attachSessionPageSockets(server.io, { db, log });
  attachRoleWatch(server.io, { db, log });
  attachSessionManageSockets(server.io, { management: new SessionManagement({ hub, db, log }), db, log, router: cluster?.router });
  attachApprovalSockets(server.io, { service: approvals, db, log, decide: cluster?.approvals?.decide });
  attachChangesSockets(server.io, { hub, snapshots, db, log, router: cluster?.router });
  attachTurnPushes({ io: server.io, hub, db, sender: push });
  // Disabled accounts, sign-outs and removed members lose their open sockets within about 2 s.
  const revocations = new RevocationSweep({
    io: server.io,
    db,
    log: log.child({ component: "revocation" }),
    onDeciders: (userId, decidesIn) => (cluster?.approvals ?? approvals).withdrawFrom(userId, decidesIn),
  });
  // A socket that stops reading is cut before its backlog grows past a few MB; it catches up from the log.
  const slowConsumers = startSlowConsumerSweep(server.io, { log: log.child({ component: "slow-consumers" }) });
  const port = await server.listen(env.CONDUIT_SIDECAR_PORT, env.CONDUIT_SIDECAR_HOST);
  log.info({ port }, "sidecar listening");
  await heartbeat.start(`http://${env.CONDUIT_SIDECAR_HOST}:${port}`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "sidecar stopping");
    // Sockets first (no new commands), then the children (their last lines are logged), then the database.
    // Redis closes after the last event is written and emitted: the other nodes' browsers see the
    // children stop (an emit after it would be lost to them, and a forwarded command meets a closed hub).
    slowConsumers.close();
    revocations
      .close()
      .then(() => server.close())
      .then(() => hub.close())
      // its children are stopped: its leases are free, and its node row says it stopped cleanly
      .then(() => leases.releaseAll())
      .then(() => heartbeat.stop())
      // the children are gone: so are their MCP configs (an exit's own removal may not have run yet)
      .then(() => resetMcpRunRoot(mcpRunRoot))
      .then(() => cgroups?.close())
      .then(() => snapshots.close())
      .then(() => writer.close())
      .then(() => approvals.close())
      .then(() => cluster?.close())
      .then(() => push.close())
      .then(() => credentialProxy.close())
      .then(() => checkpointer.close())
      .then(() => spawnHelper.close())
      .then(() => snapshotDoors.close())
      .then(() => db.$disconnect())
      .finally(() => process.exit(0));
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

/** Why bubblewrap does not work here and what to do (the probe is run again for its stderr). */
async function diagnoseBwrap(): Promise<SandboxDiagnosis> {
  const bwrapPath = process.platform === "linux" ? findOnPath("bwrap") : undefined;
  const probeError = bwrapPath === undefined ? undefined : await probeBwrap(bwrapPath).catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
  return diagnoseSandbox(readSandboxHostFacts(bwrapPath, probeError));
}

/** Tells the web app which isolation is in force (its banner and /api/health read the file). */
function writeSandboxStatus(dataDir: string, status: SandboxStatus): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(dataDir, sandboxStatusFile), `${JSON.stringify(status)}\n`, { mode: 0o644 });
}

main().catch((err: unknown) => {
  log.fatal({ err }, err instanceof Error ? err.message : "sidecar failed to start");
  process.exit(1);
});
