/**
 * The sidecar's Redis half, wired in one call when `REDIS_URL` is set: the connection, the
 * Socket.IO streams adapter (room emits, `user:<id>` notifications and `fetchSockets` reach every
 * node, and connection-state recovery keeps working, which the pub/sub adapter loses), the command
 * bus, the session router with its `SessionCommands`, the remote catch-up and the approval
 * forwarding. Without `REDIS_URL` nothing here runs and the sidecar is a cluster of one.
 *
 * Everything crossing Redis is protected with keys derived from the shared `NEXTAUTH_SECRET`
 * (`cluster-keys.ts`): bus messages are signed (`bus-signing.ts`) and each forwarded command is
 * checked again by its owner (`forwarded-authorization.ts`); the adapter's stream and channels
 * are encrypted (`adapter-sealing.ts`). docs/SECURITY.md, "Cluster".
 *
 * Owns: the order of start and close of the parts above. Must not: hold behaviour of its own.
 */
import type { Logger } from "pino";
import type { Server } from "socket.io";
import type { Db } from "@/server/db/client";
import type { ApprovalService } from "@/server/sidecar/approval/approval-service";
import { createAdapterSeal, sealAdapterClient } from "./adapter-sealing";
import { createClusterApprovals, type ClusterApprovals } from "./approval-forwarder";
import type { ClusterDirectory } from "./cluster-directory";
import { deriveClusterKeys } from "./cluster-keys";
import { createCommandBus } from "./command-bus";
import { createSessionRouter, ForwardingSessionCommands, type LocalSessionCommands, type SessionRouter } from "./command-forwarder";
import { createForwardedAuthorizer } from "./forwarded-authorization";
import { connectRedis } from "./redis-connection";
import { createRelayAdapter } from "./relay-adapter";
import { createRemoteSubscriptions, type RemoteSubscriptions } from "./remote-subscribe";

export interface ClusterForwardingOptions {
  redisUrl: string;
  /** The secret every sidecar of the cluster shares (`NEXTAUTH_SECRET`): the bus and adapter keys are derived from it. */
  secret: string;
  /** Prefix of every Redis key and stream of this cluster (tests use a unique one). */
  prefix?: string;
  io: Server;
  db: Db;
  directory: ClusterDirectory;
  hub: LocalSessionCommands;
  approvals?: ApprovalService;
  log: Logger;
  /** Forwarded commands' time, answer included. */
  observeForward?: (seconds: number, method: string) => void;
  /** Wait for an owner's answer (default `defaultForwardTimeoutMs`). */
  forwardTimeoutMs?: number;
  /** Whether this node holds a session's lease now (`LeaseKeeper.holds`): its commands run here without a read. */
  holds?: (sessionId: string) => boolean;
}

export interface ClusterForwarding {
  commands: ForwardingSessionCommands;
  router: SessionRouter;
  remote: RemoteSubscriptions;
  approvals: ClusterApprovals | undefined;
  /** Stops the bus, then closes Redis: last, after the hub, the event writer and the approvals (their last emits cross Redis). */
  close(): Promise<void>;
}

/** The default key prefix. */
export const defaultClusterPrefix = "conduit";

export async function startClusterForwarding(options: ClusterForwardingOptions): Promise<ClusterForwarding> {
  const prefix = options.prefix ?? defaultClusterPrefix;
  const log = options.log.child({ component: "cluster" });
  const keys = await deriveClusterKeys(options.secret);
  const redis = await connectRedis(options.redisUrl, log);
  try {
    const seal = createAdapterSeal({ key: keys.adapterSeal });
    const publisher = sealAdapterClient(await redis.publisher(), seal, (reason, where) =>
      log.warn({ reason, where }, `a Socket.IO adapter message was refused: ${reason}`),
    );
    options.io.adapter(
      createRelayAdapter(
        publisher,
        { streamName: `${prefix}:socket.io`, sessionKeyPrefix: `${prefix}:sio:session:`, channelPrefix: `${prefix}:socket.io` },
        (err) => log.warn({ err }, "publishing an emit to the other sidecars failed"),
      ),
    );
    const bus = await createCommandBus({
      redis,
      selfId: options.directory.selfId,
      prefix,
      log,
      key: keys.busMac,
      checkFor: createForwardedAuthorizer({ db: options.db, log }).checkFor,
      ...(options.forwardTimeoutMs !== undefined ? { timeoutMs: options.forwardTimeoutMs } : {}),
    });
    const router = createSessionRouter({
      directory: options.directory,
      bus,
      ...(options.observeForward ? { observeForward: options.observeForward } : {}),
      ...(options.holds ? { holds: options.holds } : {}),
    });
    const commands = new ForwardingSessionCommands(options.hub, { directory: options.directory, bus, router });
    // The owner's view; when it does not answer (dying, adopted soon), this node's reading of the row.
    const remote = createRemoteSubscriptions({
      db: options.db,
      directory: options.directory,
      view: (id) => commands.view(id).catch(() => options.hub.view(id)),
    });
    const approvals = options.approvals
      ? createClusterApprovals({
          service: options.approvals,
          db: options.db,
          directory: options.directory,
          bus,
          router,
          log,
          onError: (err) => log.warn({ err }, "sending a withdrawal to the other sidecars failed"),
        })
      : undefined;
    log.info({ node: options.directory.selfId, prefix }, "cluster forwarding on Redis started");
    return {
      commands,
      router,
      remote,
      approvals,
      async close() {
        await bus.close();
        await redis.close();
      },
    };
  } catch (err) {
    await redis.close();
    throw err;
  }
}
