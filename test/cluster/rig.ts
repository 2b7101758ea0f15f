/**
 * The cluster rig (issue #14): N real sidecar processes (`server/sidecar/main.ts`, each with its
 * own `CONDUIT_SIDECAR_ID` and port) on one PostgreSQL database (a fresh one per rig, dropped at
 * close) and one Redis (`REDIS_URL`, a database index of its own per rig), sharing one data dir
 * and one workspaces root as sidecars on shared storage do; optionally the edge in front of them
 * (`CONDUIT_SIDECAR_UPSTREAMS`); and browser-like socket clients connected to any node. The
 * processes and clients are the chaos suite's (`SidecarProcess`, `ChaosClient` of
 * test/chaos/rig.ts), the CLIs the fake one (test/fake-cli, a mode per workspace) or the real
 * `claude` against the scripted model.
 *
 * Needs `CONDUIT_TEST_PG_URL` and `CONDUIT_TEST_REDIS_URL` (`.ci/run` sets both); without them
 * {@link clusterUnavailableReason} says why, and callers skip loudly.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomInt, randomUUID } from "node:crypto";
import { createWriteStream, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createClient } from "redis";
import { createDb, type Db } from "@/server/db/client";
import { deployMigrations, pgUnreachableReason, withScratchPgDatabase } from "@/server/db/migrations";
import type { ModelServer } from "@/server/model-server/model-server";
import {
  ChaosClient,
  createSessionThrough,
  seedTeam,
  SidecarProcess,
  startChaosModel,
  writeCliWrapper,
  type Person,
} from "@/test/chaos/rig";
import { until } from "@/test/until";
import { freePorts } from "@/e2e/support/fresh-clone";

const root = path.resolve(import.meta.dirname, "../..");

/** The rig's workspaces: `real` runs the real CLI, the others the fake CLI in that mode. */
export const clusterWorkspaces = ["real", "behave", "permission", "stream"] as const;
export type ClusterWorkspace = (typeof clusterWorkspaces)[number];

/** Why the rig cannot run here (no PostgreSQL or Redis named or answering), or undefined when it can. */
export async function clusterUnavailableReason(): Promise<string | undefined> {
  const pg = process.env.CONDUIT_TEST_PG_URL;
  const redis = process.env.CONDUIT_TEST_REDIS_URL;
  if (!pg) return "CONDUIT_TEST_PG_URL is not set (export CONDUIT_TEST_PG_URL=$(bash scripts/ci-postgres.sh))";
  if (!redis) return "CONDUIT_TEST_REDIS_URL is not set (export CONDUIT_TEST_REDIS_URL=$(bash scripts/ci-redis.sh))";
  const pgDown = await pgUnreachableReason(pg);
  if (pgDown !== null) return `PostgreSQL at CONDUIT_TEST_PG_URL does not answer: ${pgDown}`;
  const client = createClient({ url: redis });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (err) {
    return `Redis at CONDUIT_TEST_REDIS_URL does not answer: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    await client.disconnect().catch(() => undefined);
  }
}

/** One sidecar of the cluster. */
export interface ClusterNode {
  /** Its CONDUIT_SIDECAR_ID. */
  id: string;
  port: number;
  process: SidecarProcess;
}

export interface ClusterOptions {
  sidecars: number;
  /** Start the edge in front of the sidecars (CONDUIT_SIDECAR_UPSTREAMS); clients may then connect to it. */
  edge?: boolean;
  /** Extra environment of every sidecar. */
  sidecarEnv?: Record<string, string>;
  /** Keep the temp directory (logs) after close. */
  keep?: boolean;
}

export interface Cluster {
  dir: string;
  dbUrl: string;
  redisUrl: string;
  db: Db;
  model: ModelServer;
  secret: string;
  origin: string;
  owner: Person;
  editor: Person;
  workspaces: Record<ClusterWorkspace, { id: string; slug: string; rootPath: string }>;
  nodes: ClusterNode[];
  /** The edge's port, with `edge: true`. */
  edgePort: number | undefined;
  clients: ChaosClient[];
  /** A client connected to `node` (a sidecar, or "edge"). */
  client(name: string, node: ClusterNode | "edge", person?: Person): Promise<ChaosClient>;
  /** A new session in `workspace`, created through `client` (on whichever node it is connected to). */
  createSession(client: ChaosClient, workspace: ClusterWorkspace, mode?: string): Promise<string>;
  /** kill -9 of a node, and no restart (a machine lost): its sessions are the survivors' to adopt. */
  kill9(node: ClusterNode): Promise<void>;
  /** The node holding an unexpired lease on the session, if any. */
  ownerOf(sessionId: string): Promise<ClusterNode | undefined>;
  close(): Promise<void>;
}

/** Starts the cluster: database, Redis, the model, the sidecars (one after another) and the edge. */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const reason = await clusterUnavailableReason();
  if (reason !== undefined) throw new Error(`the cluster rig cannot start: ${reason}`);
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), "conduit-cluster-")));
  const dataDir = path.join(dir, "data");
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });

  // A fresh PostgreSQL database, held until close.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let scratch: Promise<void> | undefined;
  const dbUrl = await new Promise<string>((resolve, reject) => {
    scratch = withScratchPgDatabase(process.env.CONDUIT_TEST_PG_URL!, async (url) => {
      resolve(url);
      await held;
    }).catch(reject);
  });
  // A Redis database index of its own, emptied first (other rigs and helpers use other indexes).
  const redisUrl = redisDatabaseUrl(process.env.CONDUIT_TEST_REDIS_URL!, 1 + randomInt(15));
  await flushRedis(redisUrl);

  const cleanups: (() => Promise<void>)[] = [];
  try {
    await deployMigrations({ url: dbUrl });
    const db = createDb(dbUrl);
    cleanups.push(() => db.$disconnect());
    const model = await startChaosModel();
    cleanups.push(() => model.close());

    const wrapper = writeCliWrapper(dir);
    const { owner, editor, workspaces } = await seedTeam(db, dir, clusterWorkspaces, {
      tag: "cluster",
      fakeModeOf: (name) => (name === "real" ? undefined : name),
    });

    const secret = `cluster-secret-${randomUUID()}`;
    // held at once while picked, so no two are the same
    const picked = await freePorts(options.sidecars + (options.edge ? 1 : 0));
    const ports = picked.slice(0, options.sidecars);
    const edgePort = options.edge ? picked[options.sidecars] : undefined;
    // One public origin for every node, as behind one edge.
    const origin = `http://127.0.0.1:${edgePort ?? ports[0]}`;
    const baseEnv: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      NODE_ENV: "test",
      LOG_LEVEL: "info",
      NEXTAUTH_SECRET: secret,
      DATABASE_URL: dbUrl,
      REDIS_URL: redisUrl,
      // scripts/ci-redis.sh gives a URL with a password; a hand-set one without gets the flag (a loopback test server)
      ...(new URL(redisUrl).password === "" ? { CONDUIT_REDIS_TRUSTED_NETWORK: "yes-i-understand" } : {}),
      CONDUIT_DATA_DIR: dataDir,
      CONDUIT_PUBLIC_URL: origin,
      CONDUIT_SANDBOX: "off",
      CONDUIT_MIN_FREE_MB: "0",
      // the scenarios' few accounts start many sessions: the fair-share caps (5 a user, 10 a workspace) are unit-tested, not here
      CONDUIT_SESSION_MAX_PER_USER: "1000",
      CONDUIT_SESSION_MAX_PER_WORKSPACE: "1000",
      CLAUDE_CLI_PATH: wrapper,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: "sk-ant-cluster-test",
      ...(process.env.CONDUIT_LEAK_TAG ? { CONDUIT_LEAK_TAG: process.env.CONDUIT_LEAK_TAG } : {}),
      ...options.sidecarEnv,
    };
    const nodes: ClusterNode[] = ports.map((port, i) => {
      const id = `sc-${i + 1}`;
      const env = { ...baseEnv, CONDUIT_SIDECAR_ID: id, CONDUIT_SIDECAR_PORT: String(port) };
      return { id, port, process: new SidecarProcess(port, env, path.join(dir, `${id}.log`)) };
    });
    cleanups.push(() => Promise.all(nodes.map((n) => n.process.close())).then(() => undefined));
    // One after another (a loaded 2-core machine starts three tsx processes at once slowly), and
    // a slow start gets two more minutes before it counts as failed.
    for (const n of nodes) await n.process.start().catch(() => n.process.waitUp(120_000));

    let edge: ChildProcess | undefined;
    if (edgePort !== undefined) {
      edge = startEdge(dir, edgePort, ports, secret, baseEnv);
      const child = edge;
      cleanups.push(async () => {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((r) => child.once("exit", r));
          child.kill("SIGTERM");
          await exited;
        }
      });
      await until(
        async () => (await fetch(`http://127.0.0.1:${edgePort}/healthz`).catch(() => undefined))?.ok === true,
        60_000,
        "the edge serves",
        100,
      );
    }

    const clients: ChaosClient[] = [];
    const cluster: Cluster = {
      dir,
      dbUrl,
      redisUrl,
      db,
      model,
      secret,
      origin,
      owner,
      editor,
      workspaces,
      nodes,
      edgePort,
      clients,
      async client(name, node, who = owner) {
        const port = node === "edge" ? edgePort : node.port;
        if (port === undefined) throw new Error("the rig has no edge (start it with edge: true)");
        const client = new ChaosClient(name, { origin, secret, sidecar: { port } }, who);
        // as the browser: a gap (a dead node's last stored events) is filled by subscribing again
        client.fillGaps = true;
        clients.push(client);
        await client.connected();
        return client;
      },
      createSession: (client, workspace, mode) => createSessionThrough(client, workspaces[workspace].slug, mode),
      async kill9(node) {
        node.process.kill9();
        // stop() after the SIGKILL: the supervisor's restart is cancelled, the node stays dead.
        await node.process.stop();
      },
      async ownerOf(sessionId) {
        const lease = await db.sessionLease.findUnique({ where: { sessionId } });
        if (!lease || lease.expiresAt.getTime() <= Date.now()) return undefined;
        return nodes.find((n) => n.id === lease.ownerId);
      },
      async close() {
        for (const client of clients.splice(0)) client.close();
        for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
        release();
        await scratch?.catch(() => undefined);
        await flushRedis(redisUrl).catch(() => undefined);
        if (!options.keep) rmSync(dir, { recursive: true, force: true });
      },
    };
    return cluster;
  } catch (err) {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    release();
    await scratch?.catch(() => undefined);
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** `url` with its database index set (redis://host:port/<n>). */
function redisDatabaseUrl(url: string, index: number): string {
  const parsed = new URL(url);
  parsed.pathname = `/${index}`;
  return parsed.toString();
}

async function flushRedis(url: string): Promise<void> {
  const client = createClient({ url });
  client.on("error", () => undefined);
  await client.connect();
  try {
    await client.flushDb();
  } finally {
    await client.disconnect();
  }
}

/** The edge (server/edge-proxy/main.ts) in front of the sidecars; the web app is not started. */
function startEdge(
  dir: string,
  port: number,
  sidecarPorts: readonly number[],
  secret: string,
  baseEnv: Record<string, string>,
): ChildProcess {
  const log = createWriteStream(path.join(dir, "edge.log"), { flags: "a" });
  const child = spawn(process.execPath, ["--import", "tsx", "server/edge-proxy/main.ts"], {
    cwd: root,
    env: {
      ...baseEnv,
      NEXTAUTH_SECRET: secret,
      PORT: String(port),
      HOST: "127.0.0.1",
      CONDUIT_SIDECAR_UPSTREAMS: sidecarPorts.map((p) => `http://127.0.0.1:${p}`).join(","),
    } as Record<string, string> as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  child.once("exit", () => log.end());
  return child;
}
