/**
 * The network of one sandboxed CLI child, in every policy (`open`, `none`, `allowlist`). Its
 * sandbox gets a network namespace of its own (`bwrap --unshare-net`: a private loopback, no
 * route out, no abstract Unix socket of the host), so whatever the child may still reach is handed
 * in as Unix sockets in a directory of this spawn, bound into the sandbox; the sandbox's forwarder
 * (`sandbox-forwarder.mjs`) turns each into a TCP port on the sandbox's loopback:
 * - `api.sock` → Conduit's credential proxy (same port inside as outside, so ANTHROPIC_BASE_URL
 *   is unchanged): the model answers in every mode;
 * - `egress.sock` (open and allowlist) → this spawn's {@link startEgressProxy}: any public address
 *   (open) or the listed names (allowlist); the proxy variables point the CLI and its tools at it.
 *   What ignores the proxy variables has no route.
 * One attachment per spawn; `close()` when that child ends (idempotent).
 */
import { mkdtemp, realpath, rm } from "node:fs/promises";
import net from "node:net";
import type { LookupFunction } from "node:net";
import os from "node:os";
import path from "node:path";
import type { NetworkPolicy } from "@/server/domain/workspace/network-policy";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { narrowingNeedsSandbox, type SandboxNetwork } from "@/server/sidecar/process/sandbox";
import { startEgressProxy, type EgressProxy } from "./egress-proxy";

/** The file of the forwarder that runs first inside a narrowed sandbox. */
export const sandboxForwarderScript = path.join(import.meta.dirname, "sandbox-forwarder.mjs");

/** Where the sandbox's forwarder listens for the egress proxy (inside the sandbox's own loopback). */
export const egressPortInside = 3128;

/** One TCP port inside the sandbox, forwarded to a Unix socket outside. */
export interface SandboxForward {
  port: number;
  socket: string;
}

/** What the sandbox of one narrowed spawn needs. */
export interface NetworkAttachment {
  readonly policy: NetworkPolicy;
  /** The directory of this spawn's sockets: bound into the sandbox at the same path. */
  readonly socketDir: string;
  readonly forwards: readonly SandboxForward[];
  /** Added to the child's environment (the proxy variables, for an allow-list). */
  readonly env: Readonly<Record<string, string>>;
  /** The egress proxy (open and allowlist). */
  readonly egress: EgressProxy | undefined;
  close(): Promise<void>;
}

/** Makes the attachment of each narrowed spawn. */
export interface SessionNetwork {
  attach(sessionId: string, policy: NetworkPolicy): Promise<NetworkAttachment>;
}

/** Options of {@link createSessionNetwork}. */
export interface SessionNetworkOptions {
  /** The credential proxy's port on the host's loopback (127.0.0.1). */
  credentialProxyPort: number;
  /** Where the per-spawn socket directories go; default the OS temp dir. */
  runRoot?: string;
  log?: (fields: Record<string, unknown>, message: string) => void;
  /** Name resolution of the egress proxies (tests only). */
  lookup?: LookupFunction;
  /** Tests and benches only: addresses an open workspace's proxy treats as public (see {@link startEgressProxy}). */
  treatAsPublic?: (address: string) => boolean;
}

/** The proxy variables of a child with an egress proxy: both spellings, since tools read one or the other. */
export function egressProxyEnv(port: number): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  const noProxy = "127.0.0.1,localhost";
  return { HTTPS_PROXY: url, HTTP_PROXY: url, https_proxy: url, http_proxy: url, NO_PROXY: noProxy, no_proxy: noProxy };
}

/** A Unix socket whose connections are piped to `port` on the host's loopback. */
async function bridgeToLoopback(socketPath: string, port: number): Promise<net.Server> {
  const connections = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, "127.0.0.1");
    connections.add(client).add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      connections.delete(client);
      connections.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream).pipe(client);
  });
  server.on("close", () => {
    for (const socket of connections) socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // close() waits for connections; a stopping child's keep-alive must not hold it open.
  const close = server.close.bind(server);
  server.close = (callback) => {
    for (const socket of connections) socket.destroy();
    return close(callback);
  };
  return server;
}

/** The network attachments of a sidecar's sandboxed spawns. */
export function createSessionNetwork(options: SessionNetworkOptions): SessionNetwork {
  return {
    async attach(sessionId, policy) {
      // 0700 (mkdtemp's default): only the sidecar's user reaches the sockets from outside.
      // A real path: the sandbox binds it at the same path, and the forwarder connects by it.
      const socketDir = await realpath(await mkdtemp(path.join(options.runRoot ?? os.tmpdir(), "conduit-net-")));
      let bridge: net.Server | undefined;
      let egress: EgressProxy | undefined;
      try {
        const apiSocket = path.join(socketDir, "api.sock");
        bridge = await bridgeToLoopback(apiSocket, options.credentialProxyPort);
        const forwards: SandboxForward[] = [{ port: options.credentialProxyPort, socket: apiSocket }];
        let env: Record<string, string> = {};
        if (policy.mode !== "none") {
          const egressSocket = path.join(socketDir, "egress.sock");
          egress = await startEgressProxy({
            sessionId,
            policy: policy.mode === "allowlist" ? { mode: "allowlist", domains: policy.domains } : { mode: "open" },
            socketPath: egressSocket,
            ...(options.log ? { log: options.log } : {}),
            ...(options.lookup ? { lookup: options.lookup } : {}),
            ...(options.treatAsPublic ? { treatAsPublic: options.treatAsPublic } : {}),
          });
          const port = egressPortInside === options.credentialProxyPort ? egressPortInside + 1 : egressPortInside;
          forwards.push({ port, socket: egressSocket });
          env = egressProxyEnv(port);
        }
        let closed: Promise<void> | undefined;
        const openBridge = bridge;
        const openEgress = egress;
        return {
          policy,
          socketDir,
          forwards,
          env,
          egress,
          close() {
            closed ??= Promise.all([
              new Promise<void>((resolve) => openBridge.close(() => resolve())),
              openEgress?.close(),
            ]).then(() => rm(socketDir, { recursive: true, force: true }));
            return closed;
          },
        };
      } catch (error) {
        bridge?.close();
        await egress?.close();
        await rm(socketDir, { recursive: true, force: true });
        throw error;
      }
    },
  };
}

/**
 * The network of the next spawn of `sessionId` under `policy`. In a sandbox, an attachment in
 * every policy (a network namespace of its own). Without one (CONDUIT_SANDBOX=off, or bubblewrap
 * missing): undefined for an open workspace — it shares the host's network, like everything else
 * of an unisolated session — and a refusal for a narrowed one, which never runs open. A runner
 * given a sandbox but no session network (some tests and benches; the sidecar always wires one)
 * runs an open workspace on the host's network.
 */
export async function attachSpawnNetwork(
  sessionId: string,
  policy: NetworkPolicy,
  sandbox: { readonly mode: "bwrap" | "off" },
  network: SessionNetwork | undefined,
): Promise<NetworkAttachment | undefined> {
  if (policy.mode === "open" && (sandbox.mode === "off" || network === undefined)) return undefined;
  if (sandbox.mode === "off" || network === undefined) throw new AppError(ErrorCode.unavailable, narrowingNeedsSandbox);
  return network.attach(sessionId, policy);
}

/** The sandbox's view of an attachment. */
export function sandboxNetworkOf(attachment: NetworkAttachment | undefined): SandboxNetwork | undefined {
  return attachment === undefined ? undefined : { socketDir: attachment.socketDir, forwards: attachment.forwards, forwarderScript: sandboxForwarderScript };
}
