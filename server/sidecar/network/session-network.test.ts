import { existsSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppError } from "@/server/shared/errors/app-error";
import { narrowingNeedsSandbox, noSandbox } from "@/server/sidecar/process/sandbox";
import { attachSpawnNetwork, createSessionNetwork, egressProxyEnv, sandboxForwarderScript, sandboxNetworkOf, type NetworkAttachment } from "./session-network";

let api: http.Server;
let port = 0;
const attachments: NetworkAttachment[] = [];

beforeEach(async () => {
  api = http.createServer((req, res) => res.end(`api saw ${req.url}`));
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  port = (api.address() as AddressInfo).port;
});
afterEach(async () => {
  await Promise.all(attachments.splice(0).map((a) => a.close()));
  api.closeAllConnections();
  await new Promise((resolve) => api.close(resolve));
});

function getVia(socketPath: string, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ socketPath, path: target }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve(body));
      })
      .on("error", reject);
  });
}

describe("createSessionNetwork", () => {
  it("gives a `none` spawn the credential proxy's socket only, at the proxy's own port", async () => {
    const attachment = await createSessionNetwork({ credentialProxyPort: port }).attach("s-1", { mode: "none", domains: [] });
    attachments.push(attachment);
    expect(attachment.forwards).toEqual([{ port, socket: `${attachment.socketDir}/api.sock` }]);
    expect(attachment.env).toEqual({});
    expect(attachment.egress).toBeUndefined();
    expect(await getVia(attachment.forwards[0]!.socket, "/v1/messages")).toBe("api saw /v1/messages");
  });

  it("adds the egress proxy and its variables for an allow-list, and removes everything on close", async () => {
    const attachment = await createSessionNetwork({ credentialProxyPort: port }).attach("s-2", { mode: "allowlist", domains: ["example.com"] });
    expect(attachment.forwards.map((f) => f.socket)).toEqual([`${attachment.socketDir}/api.sock`, `${attachment.socketDir}/egress.sock`]);
    const egressPort = attachment.forwards[1]!.port;
    expect(egressPort).not.toBe(port);
    expect(attachment.env).toEqual(egressProxyEnv(egressPort));
    expect(await getVia(attachment.forwards[1]!.socket, "http://not-listed.test/")).toMatch(/not on this workspace's network allow-list/);
    await attachment.close();
    await attachment.close(); // idempotent
    expect(existsSync(attachment.socketDir)).toBe(false);
  });

  it("gives an open spawn the credential proxy and an egress proxy that refuses this host", async () => {
    const attachment = await createSessionNetwork({ credentialProxyPort: port }).attach("s-3", { mode: "open", domains: [] });
    attachments.push(attachment);
    expect(attachment.forwards.map((f) => f.socket)).toEqual([`${attachment.socketDir}/api.sock`, `${attachment.socketDir}/egress.sock`]);
    expect(attachment.env).toEqual(egressProxyEnv(attachment.forwards[1]!.port));
    expect(await getVia(attachment.forwards[0]!.socket, "/v1/messages")).toBe("api saw /v1/messages");
    // The credential proxy's own port on the host's loopback, asked for through the egress proxy.
    expect(await getVia(attachment.forwards[1]!.socket, `http://127.0.0.1:${port}/v1/messages`)).toMatch(/Conduit refused this connection: 127\.0\.0\.1 is an address of this host/);
    expect(attachment.egress!.refusals).toEqual([expect.objectContaining({ host: "127.0.0.1" })]);
  });

  it("passes a test's public-address hook to an open spawn's proxy", async () => {
    const attachment = await createSessionNetwork({ credentialProxyPort: port, treatAsPublic: (a) => a === "127.0.0.1" }).attach("s-4", { mode: "open", domains: [] });
    attachments.push(attachment);
    expect(await getVia(attachment.forwards[1]!.socket, `http://127.0.0.1:${port}/through`)).toBe("api saw /through");
  });
});

describe("attachSpawnNetwork", () => {
  const bwrap = { mode: "bwrap" as const };
  const sessions = createSessionNetwork({ credentialProxyPort: 1 });

  it("leaves an open workspace on the host's network only where nothing isolates it", async () => {
    expect(await attachSpawnNetwork("s", { mode: "open", domains: [] }, noSandbox, sessions)).toBeUndefined();
    expect(await attachSpawnNetwork("s", { mode: "open", domains: [] }, bwrap, undefined)).toBeUndefined();
  });

  it("attaches an open workspace in a sandbox: a network namespace of its own", async () => {
    const attachment = (await attachSpawnNetwork("s", { mode: "open", domains: [] }, bwrap, sessions))!;
    attachments.push(attachment);
    expect(attachment.policy.mode).toBe("open");
    expect(attachment.egress).toBeDefined();
  });

  it("refuses a narrowed workspace without a sandbox (never runs it open)", async () => {
    for (const policy of [{ mode: "none" as const, domains: [] }, { mode: "allowlist" as const, domains: ["example.com"] }]) {
      const refusal = attachSpawnNetwork("s", policy, noSandbox, sessions);
      await expect(refusal).rejects.toBeInstanceOf(AppError);
      await expect(refusal).rejects.toThrow(narrowingNeedsSandbox);
    }
    await expect(attachSpawnNetwork("s", { mode: "none", domains: [] }, bwrap, undefined)).rejects.toThrow(/cannot be enforced/);
  });

  it("attaches in a sandbox; the sandbox's view names the forwarder", async () => {
    const attachment = (await attachSpawnNetwork("s", { mode: "none", domains: [] }, bwrap, sessions))!;
    attachments.push(attachment);
    expect(sandboxNetworkOf(attachment)).toEqual({ socketDir: attachment.socketDir, forwards: attachment.forwards, forwarderScript: sandboxForwarderScript });
    expect(existsSync(sandboxForwarderScript)).toBe(true);
    expect(sandboxNetworkOf(undefined)).toBeUndefined();
  });
});

describe("noSandbox", () => {
  it("refuses to wrap a launch with a narrowed network", () => {
    const launch = { file: "/bin/true", args: [], cwd: "/", env: {} };
    expect(noSandbox.wrap(launch, { workspaceRoot: "/w", configDir: "/c" })).toBe(launch);
    expect(() => noSandbox.wrap(launch, { workspaceRoot: "/w", configDir: "/c" }, { socketDir: "/tmp/x", forwards: [], forwarderScript: sandboxForwarderScript })).toThrow(
      narrowingNeedsSandbox,
    );
  });
});
