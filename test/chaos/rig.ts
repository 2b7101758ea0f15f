/**
 * The chaos suite's world (docs/CHAOS.md): a migrated SQLite database with people and one
 * workspace per CLI behaviour, the scripted model server, the real sidecar (`server/sidecar/main.ts`)
 * as a child process restarted by the same crash policy as `npm start` (scripts/start-supervisor.ts),
 * and socket.io clients that behave as the browser does (reconnect, re-subscribe from the last seq
 * they hold, retry commands with the same commandId). Each workspace's `.fake-mode` file picks the
 * fault-injecting fake CLI for its sessions; without one the real `claude` runs against the model.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
  type WriteStream,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { io, type Socket } from "socket.io-client";
import { createDb, type Db } from "@/server/db/client";
import { deployMigrations } from "@/server/db/migrations";
import { startModelServer, type ModelServer } from "@/server/model-server/model-server";
import { say } from "@/server/model-server/scenario";
import { EDGE_VOUCH_HEADER } from "@/server/shared/edge-vouch";
import { mintSocketToken } from "@/server/shared/socket-token";
import type { Ack } from "@/server/shared/wire/ack";
import { onSessionEvents, type SubscribeResult, type WireEvent } from "@/server/shared/wire/session";
import { resolveClaudeBinary } from "@/server/sidecar/process/claude-binary";
import { maxCommandsInFlight } from "@/server/sidecar/socket/handle-command";
import { CrashTracker } from "@/scripts/start-supervisor";
import { fakeCliScript } from "@/test/fake-cli/runner-kit";
import { until } from "@/test/until";
import { freePorts } from "@/e2e/support/fresh-clone";

/**
 * `deriveEdgeVouch` (server/shared/edge-vouch: HMAC-SHA256 of its label, base64url), computed
 * synchronously: a client is built in a constructor. The sidecar's port answers only requests
 * carrying it, as the edge sends them; the rigs talk to the sidecars directly.
 */
export function edgeVouchOf(secret: string): string {
  return createHmac("sha256", secret).update("conduit-edge-vouch:v1").digest("base64url");
}

/** `/metrics` answers the token's holder only (no loopback trust): the chaos world's sidecar gets this one. */
export const rigMetricsToken = "rig-metrics-token-0123456789";

const root = path.resolve(import.meta.dirname, "../..");

/** The workspaces of the world: `real` runs the real CLI, the others the fake CLI in that mode. */
export const workspaceModes = [
  "real",
  "behave",
  "permission",
  "hang",
  "ignore-sigterm",
  "setsid-grandchild",
  "result-then-alive",
  "flood",
  "hog",
] as const;
export type WorkspaceName = (typeof workspaceModes)[number];

export interface Person {
  id: string;
  name: string;
}

/** What every scenario adds up (the suite's headline). */
export interface Counts {
  events_lost: number;
  events_dup: number;
  approvals_lost: number;
  cost_double: number;
  prompts_lost: number;
}

export const zeroCounts = (): Counts => ({
  events_lost: 0,
  events_dup: 0,
  approvals_lost: 0,
  cost_double: 0,
  prompts_lost: 0,
});

export function addCounts(into: Counts, more: Partial<Counts>): void {
  for (const key of Object.keys(into) as (keyof Counts)[]) into[key] += more[key] ?? 0;
}

// ---------------------------------------------------------------------------------------------
// the sidecar process

/** The real sidecar as a child process, restarted after a crash as `npm start` does. */
export class SidecarProcess {
  child: ChildProcess | undefined;
  /** Starts of this process so far (1 = the first). */
  starts = 0;
  /** Restarts the supervisor made after an unexpected exit. */
  restarts = 0;
  private readonly crashes = new CrashTracker();
  private expectExit = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private nextEnv: Record<string, string> = {};
  private readonly logStream: WriteStream;

  constructor(
    readonly port: number,
    private readonly env: Record<string, string>,
    readonly logFile: string,
  ) {
    this.logStream = createWriteStream(logFile, { flags: "a" });
  }

  /** Starts it and waits until it serves /healthz. `once` variables apply to this start only. */
  async start(once: Record<string, string> = {}): Promise<void> {
    this.expectExit = false;
    this.nextEnv = once;
    this.spawnChild();
    await this.waitUp();
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGKILL now; the supervisor starts a new one after its pause. */
  kill9(): void {
    if (this.child?.pid) process.kill(this.child.pid, "SIGKILL");
  }

  /** Resolves when a sidecar other than `previousPid` serves. */
  async waitRestarted(previousPid: number | undefined, timeoutMs = 60_000): Promise<void> {
    await until(() => this.pid !== previousPid && this.alive(), timeoutMs, "the sidecar's restart", 50);
    await this.waitUp(timeoutMs);
  }

  async waitUp(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.alive()) {
        try {
          // the sidecar names its pid only to a request with the edge's vouch
          const headers = { [EDGE_VOUCH_HEADER]: edgeVouchOf(this.env.NEXTAUTH_SECRET ?? "") };
          const res = await fetch(`http://127.0.0.1:${this.port}/healthz`, { signal: AbortSignal.timeout(1000), headers });
          const body = (await res.json()) as { pid?: number };
          if (body.pid === this.pid) return;
        } catch {
          // not yet
        }
      }
      if (Date.now() > deadline)
        throw new Error(`the sidecar did not serve within ${timeoutMs} ms (log: ${this.logFile})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** SIGTERM and wait (the polite stop); no restart follows. */
  async stop(): Promise<void> {
    clearTimeout(this.restartTimer);
    this.expectExit = true;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      const late = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(late);
    }
  }

  /** Stops it and closes its log. */
  async close(): Promise<void> {
    await this.stop();
    this.logStream.end();
  }

  private spawnChild(): void {
    this.starts += 1;
    const env = { ...this.env, ...this.nextEnv };
    this.nextEnv = {};
    const child = spawn(process.execPath, ["--import", "tsx", "server/sidecar/main.ts"], {
      cwd: root,
      env: env as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.logStream.write(`--- sidecar start ${this.starts} (pid ${child.pid}) ${new Date().toISOString()}\n`);
    child.stdout?.pipe(this.logStream, { end: false });
    child.stderr?.pipe(this.logStream, { end: false });
    this.child = child;
    this.crashes.started();
    child.once("exit", () => {
      if (this.expectExit || this.child !== child) return;
      const decision = this.crashes.crashed();
      if (decision.action === "give-up") {
        this.logStream.write("--- crash loop: not restarted\n");
        return;
      }
      this.restartTimer = setTimeout(() => {
        this.restarts += 1;
        this.spawnChild();
      }, decision.delayMs);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// clients

/** What one client holds of one session, and what went wrong on the way. */
export interface SessionView {
  events: WireEvent[];
  last: number;
  duplicates: number;
  outOfOrder: number;
  /** The first few out-of-order arrivals: `seq after last`. */
  disorder: string[];
  resets: number;
}

export interface CommandOptions {
  /** Attempts in all (the same payload, so the same commandId). */
  attempts?: number;
  ackTimeoutMs?: number;
  /** Drop the first `n` acks as if lost on the wire. */
  loseAcks?: number;
}

/** The last seq up to which a view holds every event (its start: 0). */
function contiguousSeq(view: SessionView): number {
  const held = new Set(view.events.map((e) => e.seq));
  let seq = 0;
  while (held.has(seq + 1)) seq += 1;
  return seq;
}

/** Where a client connects: a sidecar's port, the public origin and the token secret. */
export type ClientTarget = Pick<ChaosWorld, "origin" | "secret"> & { sidecar: { port: number } };

/** A browser-like socket.io client. */
export class ChaosClient {
  readonly socket: Socket;
  readonly views = new Map<string, SessionView>();
  /** Connections made (1 + reconnects). */
  connects = 0;
  private readonly watched = new Set<string>();
  private subscribing = new Map<string, Promise<void>>();
  private inFlight = 0;
  private readonly slotWaiters: (() => void)[] = [];
  /** Why each connection ended, as socket.io-client reported it. */
  readonly disconnects: string[] = [];
  /**
   * Fill gaps as the browser's session view does (components/session/session-log.ts): a live
   * event past a missing seq makes the client subscribe again from the last contiguous seq, and
   * the events such a page repeats are not counted as duplicates. Off in the one-sidecar world,
   * where no gap may ever appear; on in the cluster rig, where a dead node's last stored events
   * reach the survivors' clients only that way.
   */
  fillGaps = false;

  constructor(
    readonly name: string,
    world: ClientTarget,
    readonly person: Person,
  ) {
    this.socket = io(`http://127.0.0.1:${world.sidecar.port}`, {
      transports: ["websocket"],
      extraHeaders: { origin: world.origin, [EDGE_VOUCH_HEADER]: edgeVouchOf(world.secret) },
      // a fresh token at every (re)connection, as the browser fetches one
      auth: (cb) => void mintSocketToken(world.secret, person.id, 3600).then((token) => cb({ token })),
      reconnection: true,
      reconnectionDelay: 100,
      reconnectionDelayMax: 500,
      randomizationFactor: 0,
      forceNew: true,
    });
    this.socket.on("connect", () => {
      this.connects += 1;
      for (const sessionId of this.watched) void this.resubscribe(sessionId);
    });
    onSessionEvents(this.socket, (event) => this.receive(event));
    this.socket.on("disconnect", (reason) => {
      this.disconnects.push(reason);
      // The server ended the connection on purpose (a sidecar stopping politely): the browser's
      // socket does not come back by itself then; this client reconnects as a reload would.
      if (reason === "io server disconnect") setTimeout(() => this.socket.connect(), 200);
    });
  }

  async connected(timeoutMs = 20_000): Promise<void> {
    await until(() => this.socket.connected, timeoutMs, `${this.name} connected`, 20);
  }

  /** Connected, and every watched session subscribed again (a reconnected page has its sessions back before anyone acts in it). */
  async ready(timeoutMs = 20_000): Promise<void> {
    await this.connected(timeoutMs);
    await until(() => this.subscribing.size === 0, timeoutMs, `${this.name} subscribed again`, 20);
  }

  view(sessionId: string): SessionView {
    let view = this.views.get(sessionId);
    if (!view) {
      view = { events: [], last: 0, duplicates: 0, outOfOrder: 0, disorder: [], resets: 0 };
      this.views.set(sessionId, view);
    }
    return view;
  }

  /** Subscribes (now and after every reconnection) from the last seq held. */
  async watch(sessionId: string): Promise<void> {
    this.watched.add(sessionId);
    await this.resubscribe(sessionId);
  }

  private resubscribe(sessionId: string): Promise<void> {
    const running = this.subscribing.get(sessionId);
    if (running) return running.then(() => this.resubscribe(sessionId));
    const next = this.subscribeLoop(sessionId).finally(() => this.subscribing.delete(sessionId));
    this.subscribing.set(sessionId, next);
    return next;
  }

  private async subscribeLoop(sessionId: string): Promise<void> {
    const view = this.view(sessionId);
    for (let page = 0; page < 10_000; page++) {
      if (!this.socket.connected) return;
      let ack: Ack<SubscribeResult>;
      try {
        const afterSeq = this.fillGaps ? contiguousSeq(view) : view.last;
        ack = await this.inSlot(
          () =>
            new Promise<Ack<SubscribeResult>>((resolve, reject) => {
              this.socket.timeout(10_000).emit("session:subscribe", { sessionId, afterSeq }, (err: Error | null, reply: Ack<SubscribeResult>) => {
                if (err) return reject(err);
                // Taken in the ack's own callback, in wire order: the sidecar sends the reply before
                // any live event of the room it joined, but a websocket chunk holding both delivers
                // them in one tick, before an `await emitWithAck` would resume.
                if (reply.ok) this.takeReply(view, reply.data);
                resolve(reply);
              });
            }),
        );
      } catch {
        return; // the connection went; the next connect subscribes again
      }
      if (!ack.ok && ack.error.code === "rate_limited") {
        // the tab's 8 commands at once were taken (a reconnect resubscribing to every session it
        // watches, beside other commands): the browser's command queue waits and asks again
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
        continue;
      }
      if (!ack.ok) throw new Error(`${this.name}: subscribe refused: ${ack.error.message}`);
      if (!ack.data.hasMore) return;
    }
  }

  private takeReply(view: SessionView, reply: SubscribeResult): void {
    if (reply.reset) {
      view.resets += 1;
      view.events = [];
      view.last = 0;
    }
    for (const event of reply.events) this.take(view, event, this.fillGaps);
  }

  private receive(event: WireEvent): void {
    if (!this.watched.has(event.sessionId)) return;
    this.take(this.view(event.sessionId), event);
  }

  /** `refill`: an event of a gap-filling page, which may repeat or precede what is held. */
  private take(view: SessionView, event: WireEvent, refill = false): void {
    if (view.events.some((e) => e.seq === event.seq)) {
      if (!refill) view.duplicates += 1;
      return;
    }
    if (this.fillGaps && !refill && event.seq > view.last + 1) void this.resubscribe(event.sessionId);
    if (event.seq < view.last && !refill) {
      view.outOfOrder += 1;
      if (view.disorder.length < 5) view.disorder.push(`${event.seq} (${event.kind}) after ${view.last}`);
    }
    view.events.push(event);
    view.last = Math.max(view.last, event.seq);
  }

  /**
   * Sends a command and waits for its ack, retrying with the same payload (same commandId) on
   * timeout or a dropped connection, as the browser's command queue does. Returns the first ack
   * that arrived (or undefined when none did).
   */
  async command<T>(
    event: string,
    payload: Record<string, unknown>,
    options: CommandOptions = {},
  ): Promise<Ack<T> | undefined> {
    const attempts = options.attempts ?? 5;
    let lose = options.loseAcks ?? 0;
    for (let attempt = 0; attempt < attempts; attempt++) {
      try {
        await this.connected(30_000);
        const ack = (await this.inSlot(() => this.socket.timeout(options.ackTimeoutMs ?? 10_000).emitWithAck(event, payload))) as Ack<T>;
        if (lose > 0) {
          lose -= 1;
          continue; // the ack "never arrived": retry the same command
        }
        return ack;
      } catch {
        // no ack within the timeout, or the connection dropped: retry
      }
    }
    return undefined;
  }

  close(): void {
    this.socket.close();
  }

  /**
   * Runs one command in one of the socket's command slots: at most as many at once as the sidecar
   * runs for one socket (`maxCommandsInFlight`), the rest wait their turn, as a page's commands
   * would rather than be refused `rate_limited` (a client here may hold the sessions of several tabs).
   */
  private async inSlot<T>(run: () => Promise<T>): Promise<T> {
    while (this.inFlight >= maxCommandsInFlight) await new Promise<void>((r) => this.slotWaiters.push(r));
    this.inFlight += 1;
    try {
      return await run();
    } finally {
      this.inFlight -= 1;
      this.slotWaiters.shift()?.();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// the world

export interface ChaosWorld {
  dir: string;
  dbUrl: string;
  db: Db;
  model: ModelServer;
  secret: string;
  origin: string;
  owner: Person;
  editor: Person;
  workspaces: Record<WorkspaceName, { id: string; slug: string; rootPath: string }>;
  sidecar: SidecarProcess;
  clients: ChaosClient[];
  client(name: string, person?: Person): Promise<ChaosClient>;
  /** A new session in `workspace`, created by the owner through `client`. */
  createSession(client: ChaosClient, workspace: WorkspaceName, mode?: string): Promise<string>;
  close(): Promise<void>;
}

/** Scenario names the model knows (prompts tag them: `[scenario:slow] …`). */
export const slowTurnChunks = 30;

export async function createWorld(
  options: { keep?: boolean; sidecarEnv?: Record<string, string> } = {},
): Promise<ChaosWorld> {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), "conduit-chaos-")));
  const dataDir = path.join(dir, "data");
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const dbUrl = `file:${path.join(dir, "conduit.db")}`;
  await deployMigrations({ url: dbUrl });
  const db = createDb(dbUrl);
  const model = await startChaosModel();
  const wrapper = writeCliWrapper(dir);
  const { owner, editor, workspaces } = await seedTeam(db, dir, workspaceModes, {
    tag: "chaos",
    // result-then-alive: the fake CLI that ignores stdin's end and SIGTERM, so only a kill ends it
    fakeModeOf: (name) => (name === "real" ? undefined : name === "result-then-alive" ? "ignore-sigterm" : name),
  });

  const secret = `chaos-secret-${randomUUID()}`;
  const port = (await freePorts(1))[0]!;
  const origin = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    NODE_ENV: "test",
    LOG_LEVEL: "info",
    NEXTAUTH_SECRET: secret,
    DATABASE_URL: dbUrl,
    CONDUIT_DATA_DIR: dataDir,
    CONDUIT_SIDECAR_PORT: String(port),
    CONDUIT_PUBLIC_URL: origin,
    CONDUIT_METRICS_TOKEN: rigMetricsToken,
    CONDUIT_SANDBOX: "off",
    CONDUIT_MIN_FREE_MB: "0",
    // the scenarios' few accounts start many sessions: the fair-share caps (5 a user, 10 a workspace) are unit-tested, not here
    CONDUIT_SESSION_MAX_PER_USER: "1000",
    CONDUIT_SESSION_MAX_PER_WORKSPACE: "1000",
    // A11: silence during a turn is "stalled" after 3 s (the real CLI streams well within it)
    CONDUIT_STALL_SEC: "3",
    CLAUDE_CLI_PATH: wrapper,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: "sk-ant-chaos-test",
    ...(process.env.CONDUIT_LEAK_TAG ? { CONDUIT_LEAK_TAG: process.env.CONDUIT_LEAK_TAG } : {}),
    ...options.sidecarEnv,
  };
  const sidecar = new SidecarProcess(port, env, path.join(dir, "sidecar.log"));
  await sidecar.start();

  const clients: ChaosClient[] = [];
  const world: ChaosWorld = {
    dir,
    dbUrl,
    db,
    model,
    secret,
    origin,
    owner,
    editor,
    workspaces,
    sidecar,
    clients,
    async client(name, who = owner) {
      const client = new ChaosClient(name, world, who);
      clients.push(client);
      await client.connected();
      return client;
    },
    createSession: (client, workspace, mode) => createSessionThrough(client, workspaces[workspace].slug, mode),
    async close() {
      for (const client of clients) client.close();
      await sidecar.close();
      await model.close();
      await db.$disconnect();
      if (!options.keep) rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}

// ---------------------------------------------------------------------------------------------
// the parts every rig sets up the same way (this one and test/cluster/rig.ts)

/** The scripted model with the rigs' scenarios (`[scenario:slow]`, `[scenario:quick]`). */
export function startChaosModel(): Promise<ModelServer> {
  return startModelServer({
    scenarios: [
      {
        name: "slow",
        steps: [
          say("", {
            chunks: Array.from({ length: slowTurnChunks }, (_, i) => `part ${i}. `),
            chunkDelayMs: 60,
            usage: { input_tokens: 1000, output_tokens: 300 },
          }),
        ],
      },
      {
        name: "quick",
        steps: [say("Quick answer.", { usage: { input_tokens: 500, output_tokens: 20 } })],
      },
    ],
  });
}

/**
 * One wrapper as CLAUDE_CLI_PATH: the fake CLI where the workspace's `.fake-mode` says so (with
 * `.fake-args`, if any), else the real one. Both in a folder of their own: a bwrap sandbox binds
 * the CLI's folder (read-only), so the fake CLI beside the wrapper is reachable inside it too.
 */
export function writeCliWrapper(dir: string): string {
  const bin = path.join(dir, "bin");
  mkdirSync(bin);
  const fakeCli = path.join(bin, "fake-cli.mjs");
  copyFileSync(fakeCliScript, fakeCli);
  const wrapper = path.join(bin, "claude-wrapper.sh");
  writeFileSync(
    wrapper,
    [
      "#!/bin/sh",
      `if [ -f .fake-mode ]; then exec ${JSON.stringify(process.execPath)} ${JSON.stringify(fakeCli)} --fake-mode "$(cat .fake-mode)" $(cat .fake-args 2>/dev/null) "$@"; fi`,
      `exec ${JSON.stringify(resolveClaudeBinary())} "$@"`,
      "",
    ].join("\n"),
  );
  chmodSync(wrapper, 0o755);
  return wrapper;
}

/**
 * Two people (Olga, owner; Ed, editor) and one workspace per name under `dir/workspaces`, with
 * the fake CLI's mode written where `fakeModeOf` names one. `tag` names slugs and email domains.
 */
export async function seedTeam<N extends string>(
  db: Db,
  dir: string,
  names: readonly N[],
  options: { tag: string; fakeModeOf: (name: N) => string | undefined },
): Promise<{ owner: Person; editor: Person; workspaces: Record<N, { id: string; slug: string; rootPath: string }> }> {
  const person = (name: string) =>
    db.user.create({ data: { email: `${name.toLowerCase()}@${options.tag}.test`, name }, select: { id: true, name: true } });
  const [owner, editor] = await Promise.all([person("Olga"), person("Ed")]);
  const workspaces = {} as Record<N, { id: string; slug: string; rootPath: string }>;
  for (const name of names) {
    const rootPath = path.join(dir, "workspaces", name);
    mkdirSync(rootPath, { recursive: true });
    const mode = options.fakeModeOf(name);
    if (mode !== undefined) writeFileSync(path.join(rootPath, ".fake-mode"), mode);
    const workspace = await db.workspace.create({
      data: { name, slug: `${options.tag}-${name}`, rootPath },
      select: { id: true, slug: true, rootPath: true },
    });
    await db.membership.createMany({
      data: [
        { workspaceId: workspace.id, userId: owner.id, role: "owner" },
        { workspaceId: workspace.id, userId: editor.id, role: "editor" },
      ],
    });
    workspaces[name] = workspace;
  }
  return { owner, editor, workspaces };
}

/** A new session in the workspace `slug`, created through `client`; its id. */
export async function createSessionThrough(client: ChaosClient, slug: string, mode = "default"): Promise<string> {
  const ack = await client.command<{ id: string }>("session:create", { workspace: slug, mode, commandId: randomUUID() });
  if (!ack?.ok) throw new Error(`session:create failed: ${ack ? ack.error.message : "no ack"}`);
  return ack.data.id;
}

// ---------------------------------------------------------------------------------------------
// the checks

interface LogRow {
  seq: number;
  kind: string;
  payload: string;
  commandId: string | null;
}

async function logOf(db: Db, sessionId: string): Promise<LogRow[]> {
  return db.sessionEvent.findMany({
    where: { sessionId },
    orderBy: { seq: "asc" },
    select: { seq: true, kind: true, payload: true, commandId: true },
  });
}

export interface ViewCheck {
  lost: number;
  dup: number;
  problems: string[];
}

/**
 * Waits (up to `settleMs`) for every client's view of `sessionId` to reach the log's last seq,
 * then compares each view with the log: a seq in the log and not in the view is lost; a seq
 * received twice is a duplicate; out-of-order deliveries and payloads unlike the log's are problems.
 */
export async function checkViews(
  world: Pick<ChaosWorld, "db">,
  sessionId: string,
  clients: readonly ChaosClient[],
  settleMs = 10_000,
): Promise<ViewCheck> {
  // the log may still grow (a turn's last events): read it until the views have all of it
  let log = await logOf(world.db, sessionId);
  await until(
    async () => {
      log = await logOf(world.db, sessionId);
      const last = log.at(-1)?.seq ?? 0;
      return clients.every((c) => c.view(sessionId).last >= last);
    },
    settleMs,
    "views caught up",
  ).catch(() => undefined);
  const result: ViewCheck = { lost: 0, dup: 0, problems: [] };
  for (const client of clients) {
    const view = client.view(sessionId);
    const bySeq = new Map(view.events.map((e) => [e.seq, e]));
    const missing = log.filter((row) => !bySeq.has(row.seq));
    result.lost += missing.length;
    result.dup += view.duplicates;
    if (missing.length > 0)
      result.problems.push(
        `${client.name}: ${missing.length} events missing (seqs ${missing
          .slice(0, 5)
          .map((m) => m.seq)
          .join(", ")}…)`,
      );
    if (view.duplicates > 0) result.problems.push(`${client.name}: ${view.duplicates} duplicate deliveries`);
    if (view.outOfOrder > 0)
      result.problems.push(`${client.name}: ${view.outOfOrder} events out of seq order (${view.disorder.join("; ")})`);
    const extra = view.events.filter((e) => !log.some((row) => row.seq === e.seq));
    if (extra.length > 0) result.problems.push(`${client.name}: ${extra.length} events not in the log`);
    for (const row of log) {
      const event = bySeq.get(row.seq);
      if (!event || event.trimmed) continue;
      if (event.kind !== row.kind || !isDeepStrictEqual(event.payload, JSON.parse(row.payload))) {
        result.problems.push(`${client.name}: event ${row.seq} differs from the log`);
        break;
      }
    }
  }
  return result;
}

/** A prompt a client sent: its commandId and whether an ack said ok. */
export interface SentPrompt {
  sessionId: string;
  commandId: string;
  acked: boolean;
}

/**
 * Prompts sent vs prompt events vs delivered: every prompt acknowledged ok must be in the log
 * exactly once, and every prompt in the log must be settled — a `result` naming its uuid (it was
 * answered), or a visible notice after it (refused, interrupted, the CLI's exit, a failed command).
 * A prompt acknowledged and then neither answered nor refused is lost.
 */
export async function checkPrompts(
  world: Pick<ChaosWorld, "db">,
  sent: readonly SentPrompt[],
): Promise<{ lost: number; dup: number; problems: string[] }> {
  const out = { lost: 0, dup: 0, problems: [] as string[] };
  for (const prompt of sent) {
    const log = await logOf(world.db, prompt.sessionId);
    const events = log.filter((row) => row.kind === "prompt" && row.commandId === prompt.commandId);
    if (events.length > 1) {
      out.dup += events.length - 1;
      out.problems.push(`prompt ${prompt.commandId} logged ${events.length} times`);
    }
    const event = events[0];
    if (!event) {
      if (prompt.acked) {
        out.lost += 1;
        out.problems.push(`prompt ${prompt.commandId} acknowledged but not in the log`);
      }
      continue;
    }
    const uuid = (JSON.parse(event.payload) as { uuid?: string }).uuid ?? "";
    const after = log.filter((row) => row.seq > event.seq);
    const answered = after.some(
      (row) => row.kind === "cli" && row.payload.includes('"type":"result"') && row.payload.includes(uuid),
    );
    const settled = after.some(
      (row) =>
        row.kind === "process" && /"phase":"(prompt-refused|turn-interrupted|exited|command-failed)"/.test(row.payload),
    );
    if (!answered && !settled) {
      out.lost += 1;
      out.problems.push(`prompt ${prompt.commandId} (seq ${event.seq}) neither answered nor refused`);
    }
  }
  return out;
}

/**
 * Cost rows vs the CLI's results. The hub writes, per result, a row keyed by the result's uuid and
 * one per model (`<uuid>#<model>`); a row whose result is not in the log, or a stored total above
 * what the CLI itself reported (the sum, over child processes, of each one's last cumulative
 * `total_cost_usd`: an upper bound, since a resumed real CLI carries its earlier cost on) counts
 * double. A result without rows is a problem too.
 */
export async function checkCost(world: Pick<ChaosWorld, "db">, sessionId: string): Promise<{ double: number; problems: string[] }> {
  const log = await logOf(world.db, sessionId);
  let bound = 0;
  let lastOfSpawn = 0;
  const results = new Set<string>();
  for (const row of log) {
    if (row.kind === "process" && row.payload.includes('"phase":"spawned"')) {
      bound += lastOfSpawn;
      lastOfSpawn = 0;
    }
    if (row.kind !== "cli" || !row.payload.includes('"type":"result"')) continue;
    const value = JSON.parse(row.payload) as { type?: string; uuid?: string; total_cost_usd?: number };
    if (value.type !== "result" || !value.uuid) continue;
    results.add(value.uuid);
    lastOfSpawn = Math.max(lastOfSpawn, value.total_cost_usd ?? 0);
  }
  bound += lastOfSpawn;
  // a result's cost rows are written just after the result is logged: give them a moment
  const counts = async () =>
    new Set(
      (await world.db.costEntry.findMany({ where: { sessionId }, select: { resultId: true } })).map(
        (r) => r.resultId.split("#")[0]!,
      ),
    );
  await until(
    async () => {
      const counted = await counts();
      return [...results].every((id) => counted.has(id));
    },
    10_000,
    "cost rows",
  ).catch(() => undefined);
  const all = await world.db.costEntry.findMany({ where: { sessionId }, select: { resultId: true, usd: true } });
  // The credential proxy meters every model call it relays and books, when a spawn ends, what no
  // result reported (`proxy-unreported-…` rows: a killed CLI's last calls, which were answered and
  // billed but never reached a result). Real spend, once: kept apart from the results' rows here.
  const proxyRows = all.filter((r) => r.resultId.startsWith("proxy-unreported-"));
  const rows = all.filter((r) => !r.resultId.startsWith("proxy-unreported-"));
  const stored = rows.reduce((sum, r) => sum + r.usd, 0);
  const counted = new Set(rows.map((r) => r.resultId.split("#")[0]!));
  const problems: string[] = [];
  const proxyUsd = proxyRows.reduce((sum, r) => sum + r.usd, 0);
  // a booked remainder can only come from a spawn that did not end its last turn with a result
  const spawns = log.filter((row) => row.kind === "process" && row.payload.includes('"phase":"spawned"')).length;
  if (proxyRows.length > 0 && proxyRows.length > spawns) problems.push(`${proxyRows.length} proxy-metered rows for ${spawns} spawns ($${proxyUsd})`);
  let double = 0;
  const strangers = [...counted].filter((id) => !results.has(id));
  if (strangers.length > 0) {
    double += strangers.length;
    problems.push(`${strangers.length} cost rows for results not in the log`);
  }
  if (stored > bound + 1e-9) {
    double += 1;
    problems.push(`cost stored ${stored} > the CLI's ${bound}`);
  }
  const missing = [...results].filter((id) => !counted.has(id));
  if (missing.length > 0) problems.push(`${missing.length} results without a cost row`);
  return { double, problems };
}

/** Approvals still pending (nobody will ever answer them: stuck) in `sessionId`. */
export async function checkApprovals(
  world: Pick<ChaosWorld, "db">,
  sessionId: string,
): Promise<{ lost: number; problems: string[] }> {
  const pending = await world.db.approval.count({ where: { sessionId, status: "pending" } });
  return { lost: pending, problems: pending > 0 ? [`${pending} approvals stuck pending`] : [] };
}

/** The last event of a kind in the log whose payload matches. */
export async function findEvent(
  world: Pick<ChaosWorld, "db">,
  sessionId: string,
  predicate: (row: LogRow) => boolean,
): Promise<LogRow | undefined> {
  return (await logOf(world.db, sessionId)).filter(predicate).at(-1);
}

export async function waitForEvent(
  world: Pick<ChaosWorld, "db">,
  sessionId: string,
  predicate: (row: LogRow) => boolean,
  timeoutMs = 30_000,
  what = "event",
): Promise<LogRow> {
  let found: LogRow | undefined;
  await until(
    async () => {
      found = await findEvent(world, sessionId, predicate);
      return found !== undefined;
    },
    timeoutMs,
    what,
    50,
  );
  return found!;
}

export const isResult = (row: LogRow) => row.kind === "cli" && row.payload.includes('"type":"result"');
export const isPhase = (phase: string) => (row: LogRow) =>
  row.kind === "process" && row.payload.includes(`"phase":"${phase}"`);

/** Pids of processes whose command line contains `needle` (from /proc). */
export function pidsMatching(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSafe("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSafe(`/proc/${entry}/cmdline`);
      if (cmdline.includes(needle)) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
function readFileSafe(file: string): string {
  return readFileSync(file, "utf8").replace(/\0/g, " ");
}
