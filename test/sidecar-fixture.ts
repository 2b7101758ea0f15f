// The sidecar's parts wired as server/sidecar/main.ts wires them (socket server, session hub,
// optionally the approval service deciding the hub's permission questions), on a free port,
// for integration tests and benchmarks; `connect` opens an authenticated socket.io client.
import path from "node:path";
import pino, { type Logger } from "pino";
import { io, type Socket } from "socket.io-client";
import { mintSocketToken } from "@/server/shared/socket-token";
import { ApprovalService } from "@/server/sidecar/approval/approval-service";
import { SessionHub, type CreateRunner, type SessionPermissionDecider } from "@/server/sidecar/session/session-hub";
import { attachApprovalSockets, notifyUsersOf } from "@/server/sidecar/socket/approval-socket";
import { createSocketServer } from "@/server/sidecar/socket/create-socket-server";
import { deriveEdgeVouch, EDGE_VOUCH_HEADER } from "@/server/shared/edge-vouch";
import { RevocationSweep } from "@/server/sidecar/socket/revocation-sweep";
import { attachSessionSockets } from "@/server/sidecar/socket/session-socket";
import { attachSessionPageSockets } from "@/server/sidecar/socket/session-pages-socket";
import { TurnSnapshots } from "@/server/sidecar/session/turn-snapshots";
import { attachChangesSockets } from "@/server/sidecar/socket/changes-socket";
import { attachSessionControlSockets } from "@/server/sidecar/socket/session-controls-socket";
import { attachSessionMcpSockets } from "@/server/sidecar/socket/session-mcp-socket";
import { loadWorkspaceMcpServers } from "@/server/sidecar/session/mcp-config";
import { attachSessionManageSockets } from "@/server/sidecar/socket/session-manage-socket";
import { SessionManagement } from "@/server/sidecar/session/session-management";
import { createDbClusterDirectory } from "@/server/sidecar/cluster/cluster-directory";
import { startClusterForwarding, type ClusterForwarding } from "@/server/sidecar/cluster/cluster-forwarding";
import { feedWithCommands } from "@/server/sidecar/cluster/command-forwarder";
import { LeaseKeeper } from "@/server/sidecar/cluster/session-leases";
import type { SessionFixtures } from "./session-fixtures";

/** The token secret and the one allowed Origin of a test sidecar. */
export const testSidecarSecret = "test-sidecar-secret-".padEnd(40, "x");
export const testSidecarOrigin = "http://127.0.0.1:3999";

export interface TestSidecarOptions {
  createRunner: CreateRunner;
  /** With the approval service deciding permission questions; without, the hub's own refusal. */
  approvals?: boolean;
  /** With the revocation sweep on its default one-second timer, as main.ts runs it. */
  revocationSweep?: boolean;
  /** Decides the hub's permission questions itself (instead of the approval service). */
  decidePermission?: SessionPermissionDecider;
  /** With per-turn snapshots of the workspace (the Changes view) and the take-back commands. */
  snapshots?: boolean;
  /** Wraps the approval service's decider (a benchmark times it). */
  wrapDecider?: (decide: SessionPermissionDecider) => SessionPermissionDecider;
  log?: Logger;
  /** This node's id (default "test"); two sidecars of one cluster need two. */
  sidecarId?: string;
  /** A lease keeper for the hub (claims before a runner starts; the test renews with `leases.renew()`). */
  leases?: boolean;
  /** Redis forwarding and fan-out as main.ts wires them with REDIS_URL set (server/sidecar/cluster). */
  cluster?: { redisUrl: string; prefix: string; forwardTimeoutMs?: number; /** The cluster's shared secret (default: the test sidecar's). */ secret?: string };
}

export interface TestSidecar {
  hub: SessionHub;
  /** Present with `approvals: true`. */
  approvals: ApprovalService | undefined;
  /** Present with `snapshots: true`. */
  snapshots: TurnSnapshots | undefined;
  /** Present with `revocationSweep: true`. */
  revocations: RevocationSweep | undefined;
  /** Present with `leases: true`. */
  leases: LeaseKeeper | undefined;
  /** Present with `cluster`. */
  cluster: ClusterForwarding | undefined;
  port: number;
  /** A connected socket.io client of `user` (a short-lived token, the allowed Origin). */
  connect(user: { id: string }): Promise<Socket>;
  /** Closes the clients, then the server, the hub and the approval service. */
  close(): Promise<void>;
}

export async function startTestSidecar(fx: SessionFixtures, options: TestSidecarOptions): Promise<TestSidecar> {
  const log = options.log ?? pino({ level: "silent" });
  const server = createSocketServer({
    secret: testSidecarSecret,
    allowedOrigins: [testSidecarOrigin],
    findUser: async (id) =>
      (await fx.db.user.findUnique({
        where: { id },
        select: { id: true, email: true, name: true, disabledAt: true, sessionVersion: true },
      })) ?? undefined,
    log,
  });
  const approvals = options.approvals
    ? new ApprovalService({ db: fx.db, log, notify: notifyUsersOf(server.io), listOthersPending: options.cluster !== undefined })
    : undefined;
  const decider =
    options.decidePermission ??
    (approvals && (options.wrapDecider?.(approvals.decidePermission) ?? approvals.decidePermission));
  // A generous before-snapshot wait: tests check what a turn changed, not how long a loaded machine takes to hash a tree.
  const snapshots = options.snapshots
    ? new TurnSnapshots({ db: fx.db, dataDir: fx.dataDir, log, beforeWaitMs: 20_000 })
    : undefined;
  const leases = options.leases ? new LeaseKeeper({ db: fx.db, selfId: options.sidecarId ?? "test", log }) : undefined;
  const hub = new SessionHub({
    ...(leases ? { leases } : {}),
    db: fx.db,
    ...(snapshots ? { turnSnapshots: snapshots } : {}),
    configRoot: path.join(fx.dataDir, "claude-config"),
    mcpServersOf: (workspaceId) => loadWorkspaceMcpServers(fx.db, fx.dataDir, workspaceId),
    sidecarId: options.sidecarId ?? "test",
    log,
    createRunner: options.createRunner,
    ...(decider ? { decidePermission: decider } : {}),
  });
  const cluster = options.cluster
    ? await startClusterForwarding({
        secret: testSidecarSecret,
        ...options.cluster,
        io: server.io,
        db: fx.db,
        directory: createDbClusterDirectory(fx.db, options.sidecarId ?? "test"),
        hub,
        ...(approvals ? { approvals } : {}),
        log,
      })
    : undefined;
  attachSessionSockets(server.io, {
    hub: cluster ? feedWithCommands(hub, cluster.commands) : hub,
    db: fx.db,
    log,
    ...(cluster ? { remoteSubscribe: cluster.remote.subscribe, clusterPresence: true } : {}),
  });
  attachSessionControlSockets(server.io, { hub, db: fx.db, log, router: cluster?.router });
  attachSessionMcpSockets(server.io, { hub, db: fx.db, log, router: cluster?.router });
  attachSessionPageSockets(server.io, { db: fx.db, log });
  attachSessionManageSockets(server.io, { management: new SessionManagement({ hub, db: fx.db, log }), db: fx.db, log, router: cluster?.router });
  if (approvals) attachApprovalSockets(server.io, { service: approvals, db: fx.db, log, decide: cluster?.approvals?.decide });
  if (snapshots) attachChangesSockets(server.io, { hub, snapshots, db: fx.db, log, router: cluster?.router });
  const revocations = options.revocationSweep
    ? new RevocationSweep({
        io: server.io,
        db: fx.db,
        log,
        onDeciders: approvals ? (userId, decidesIn) => approvals.withdrawFrom(userId, decidesIn) : undefined,
      })
    : undefined;
  const port = await server.listen(0, "127.0.0.1");
  const sockets: Socket[] = [];
  return {
    hub,
    approvals,
    snapshots,
    revocations,
    cluster,
    leases,
    port,
    async connect(user) {
      const socket = io(`http://127.0.0.1:${port}`, {
        transports: ["websocket"],
        // what the edge adds to everything it forwards (the sidecar's port answers nothing else)
        extraHeaders: { origin: testSidecarOrigin, [EDGE_VOUCH_HEADER]: await deriveEdgeVouch(testSidecarSecret) },
        auth: { token: await mintSocketToken(testSidecarSecret, user.id, 3600) },
        reconnection: false,
        forceNew: true,
      });
      sockets.push(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once("connect", () => resolve());
        socket.once("connect_error", reject);
      });
      return socket;
    },
    async close() {
      for (const socket of sockets) socket.close();
      await revocations?.close();
      await server.close();
      await hub.close();
      await snapshots?.close();
      await approvals?.close();
      // last, as in server/sidecar/main.ts: the hub's and the approvals' last emits cross Redis
      await cluster?.close();
    },
  };
}
