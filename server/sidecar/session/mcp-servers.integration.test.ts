// MCP servers per workspace, end to end below the browser: an owner configures them through the
// web service (secrets sealed there), the sidecar opens them at spawn and hands the real CLI a
// private --mcp-config; `session:mcp-status` then reports what the CLI says: a stdio server made
// with the MCP SDK (it starts only when its secret env var arrived) is connected with its tool, a
// broken command is failed. Secrets never appear in a view or in the database; the config file is
// 0600 in a 0700 directory outside the workspace while the child runs and gone once it exited.
// In bubblewrap, a server in the workspace connects, and the model's call of its tool is asked,
// allowed by the owner through the approval flow, and answered by the server.
import { copyFile, mkdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import type { Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "@/server/db/client";
import { callTool, say } from "@/server/model-server/scenario";
import type { ApprovalView } from "@/server/shared/wire/approval";
import type { Ack } from "@/server/shared/wire/ack";
import type { CommandAccepted, SessionView } from "@/server/shared/wire/session";
import type { McpStatusReply } from "@/server/shared/wire/session-mcp";
import { createBwrapSandbox, findOnPath } from "@/server/sidecar/process/sandbox";
import { createSessionRunner } from "@/server/sidecar/session/session-runner";
import type * as McpService from "@/server/web/mcp-servers";
import { startCliEnv, type CliEnv } from "@/test/cli-env";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { startTestSidecar, type TestSidecar } from "@/test/sidecar-fixture";
import { until } from "@/test/until";

const echoServer = path.join(import.meta.dirname, "../../../test/mcp/echo-mcp-server.mjs");
const pingServer = path.join(import.meta.dirname, "../../../test/mcp/ping-mcp-server.mjs");
const secretToken = "tok-PLAINTEXT-9f3c2a71";
const secretHeader = "Bearer HEADER-PLAINTEXT-55aa";

let counter = 0;
const commandId = () => `mcp-${++counter}-${Math.random().toString(36).slice(2, 10)}`;

function ask<T>(socket: Socket, name: string, payload: unknown): Promise<Ack<T>> {
  return socket.timeout(60_000).emitWithAck(name, payload) as Promise<Ack<T>>;
}

describe("MCP servers of a workspace with the real CLI", () => {
  let cli: CliEnv;
  let fx: SessionFixtures;
  let mcp: typeof McpService;
  let sidecar: TestSidecar;
  let owner: Socket;
  let viewer: Socket;
  let outsider: Socket;
  /** Later sessions run in bubblewrap, as in production. */
  let sandboxed = false;

  beforeAll(async () => {
    cli = await startCliEnv();
    cli.server.addScenario("mcp-ping", [callTool("mcp__ping__ping", {}), say("pinged")]);
    fx = await createSessionFixtures({ rootPath: cli.cwd });
    process.env.DATABASE_URL = fx.url;
    process.env.CONDUIT_DATA_DIR = fx.dataDir;
    mcp = await import("@/server/web/mcp-servers");
    sidecar = await startTestSidecar(fx, {
      createRunner: (options, decidePermission) => {
        const bwrapPath = findOnPath("bwrap");
        if (sandboxed && bwrapPath === undefined) throw new Error("bubblewrap is required for this test (apt-get install bubblewrap)");
        const sandbox = sandboxed && bwrapPath !== undefined ? { sandbox: createBwrapSandbox({ bwrapPath, cliPath: cli.cliPath }) } : {};
        return createSessionRunner(options, { cliPath: cli.cliPath, decidePermission, baseEnv: cli.env, ...sandbox });
      },
      approvals: true,
      log: pino({ level: "silent" }),
    });
    [owner, viewer, outsider] = await Promise.all([sidecar.connect(fx.owner), sidecar.connect(fx.viewer), sidecar.connect(fx.outsider)]);
  }, 60_000);

  afterAll(async () => {
    await sidecar?.close();
    await cli?.close();
    await closeDb();
    await fx?.close();
  });

  it("keeps secret values out of every view and out of the database, and only owners write", async () => {
    const slug = fx.workspace.slug;
    const echo = await mcp.createMcpServer(fx.owner.id, slug, {
      transport: "stdio",
      name: "echo",
      command: process.execPath,
      args: [echoServer],
      env: [{ name: "ECHO_TOKEN", value: secretToken }],
      enabled: true,
    });
    expect(echo.env).toEqual([{ name: "ECHO_TOKEN", set: true }]);
    await mcp.createMcpServer(fx.owner.id, slug, { transport: "stdio", name: "broken", command: "/nonexistent/mcp-server", args: [], env: [], enabled: true });
    const remote = await mcp.createMcpServer(fx.owner.id, slug, {
      transport: "http",
      name: "remote",
      url: "http://127.0.0.1:9/mcp",
      headers: [{ name: "Authorization", value: secretHeader }],
      enabled: false,
    });
    // an edit that names the header without a value keeps it; a new value replaces it
    const kept = await mcp.updateMcpServer(fx.owner.id, slug, remote.id, { headers: [{ name: "Authorization" }], url: "http://127.0.0.1:9/other" });
    expect(kept.headers).toEqual([{ name: "Authorization", set: true }]);
    await expect(mcp.updateMcpServer(fx.owner.id, slug, remote.id, { headers: [{ name: "X-New" }] })).rejects.toMatchObject({ code: "invalid_payload" });

    const views = await mcp.listMcpServers(fx.viewer.id, slug);
    expect(views.map((v) => v.name)).toEqual(["broken", "echo", "remote"]);
    const everything = JSON.stringify(views) + JSON.stringify(echo) + JSON.stringify(kept);
    expect(everything).not.toContain(secretToken);
    expect(everything).not.toContain("HEADER-PLAINTEXT");

    const rows = await fx.db.workspaceMcpServer.findMany();
    expect(JSON.stringify(rows)).not.toContain(secretToken);
    expect(JSON.stringify(rows)).not.toContain("HEADER-PLAINTEXT");
    const audit = await fx.db.auditLog.findMany({ where: { action: { startsWith: "workspace.mcp." } } });
    expect(audit.map((a) => a.action).sort()).toEqual(["workspace.mcp.create", "workspace.mcp.create", "workspace.mcp.create", "workspace.mcp.update"]);
    expect(JSON.stringify(audit)).not.toContain(secretToken);

    // the sealed blob opens only for its own row
    const echoRow = rows.find((r) => r.name === "echo")!;
    await fx.db.workspaceMcpServer.update({ where: { id: remote.id }, data: { secrets: echoRow.secrets } });
    expect((await mcp.listMcpServers(fx.owner.id, slug)).find((v) => v.id === remote.id)).toMatchObject({ headers: [], secretsUnreadable: true });
    await expect(mcp.updateMcpServer(fx.owner.id, slug, remote.id, { headers: [{ name: "Authorization" }] })).rejects.toMatchObject({ code: "internal" });
    // entering the value again replaces the blob
    await mcp.updateMcpServer(fx.owner.id, slug, remote.id, { headers: [{ name: "Authorization", value: secretHeader }] });
    expect((await mcp.listMcpServers(fx.owner.id, slug)).find((v) => v.id === remote.id)).toMatchObject({ headers: [{ name: "Authorization", set: true }] });

    await expect(mcp.createMcpServer(fx.editor.id, slug, { transport: "http", name: "x", url: "https://example.com/mcp", headers: [], enabled: true })).rejects.toMatchObject({ code: "forbidden" });
    await expect(mcp.deleteMcpServer(fx.viewer.id, slug, remote.id)).rejects.toMatchObject({ code: "forbidden" });
    await expect(mcp.listMcpServers(fx.outsider.id, slug)).rejects.toMatchObject({ code: "not_found" });
    await expect(mcp.createMcpServer(fx.owner.id, slug, { transport: "http", name: "echo", url: "https://example.com/mcp", headers: [], enabled: true })).rejects.toMatchObject({ code: "conflict" });
  });

  it("gives a session the enabled servers: the SDK server is connected with its tool, a broken command failed", async () => {
    const created = await ask<SessionView>(owner, "session:create", { workspace: fx.workspace.slug, mode: "default", commandId: commandId() });
    if (!created.ok) throw new Error(created.error.message);
    const sessionId = created.data.id;
    const sub = await ask(owner, "session:subscribe", { sessionId, afterSeq: 0 });
    if (!sub.ok) throw new Error(sub.error.message);
    await until(async () => (await sidecar.hub.liveRunner(sessionId)) !== undefined, 30_000, "a live CLI");

    // the child's argv names the config: private, outside the workspace, strict (the workspace is untrusted)
    let pid = 0;
    await until(
      async () => {
        for (const e of await fx.db.sessionEvent.findMany({ where: { sessionId, kind: "process" } })) {
          const payload = JSON.parse(e.payload) as { phase?: string; pid?: number };
          if (payload.phase === "spawned" && payload.pid) pid = payload.pid;
        }
        return pid > 0;
      },
      30_000,
      "the spawn event",
    );
    const argv = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0");
    const configFile = argv[argv.indexOf("--mcp-config") + 1]!;
    expect(argv).toContain("--strict-mcp-config");
    expect(path.relative(cli.cwd, configFile).startsWith("..")).toBe(true);
    expect((await stat(configFile)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(configFile))).mode & 0o777).toBe(0o700);
    const config = JSON.parse(await readFile(configFile, "utf8")) as { mcpServers: Record<string, unknown> };
    expect(Object.keys(config.mcpServers).sort()).toEqual(["broken", "echo"]); // "remote" is disabled

    let status: McpStatusReply | undefined;
    await until(
      async () => {
        const ack = await ask<McpStatusReply>(viewer, "session:mcp-status", { sessionId });
        if (!ack.ok) throw new Error(ack.error.message);
        status = ack.data;
        return status.servers.every((s) => s.status !== "pending");
      },
      30_000,
      "the servers to leave pending",
    );
    const byName = new Map(status!.servers.map((s) => [s.name, s]));
    expect(byName.get("echo")).toMatchObject({ status: "connected" });
    expect(byName.get("echo")!.tools).toEqual(["echo"]);
    expect(byName.get("broken")).toMatchObject({ status: "failed", error: expect.stringContaining("ENOENT") });
    expect(byName.has("remote")).toBe(false);
    expect(JSON.stringify(status)).not.toContain(secretToken);

    const refused = await ask(outsider, "session:mcp-status", { sessionId });
    expect(refused).toMatchObject({ ok: false, error: { code: "not_found" } });

    // stopping the process removes the config
    const stopped = await ask<CommandAccepted>(owner, "session:stop", { sessionId, commandId: commandId() });
    if (!stopped.ok) throw new Error(stopped.error.message);
    await until(async () => (await stat(path.dirname(configFile)).then(() => false, () => true)), 20_000, "the config directory to be removed");
    const notRunning = await ask(owner, "session:mcp-status", { sessionId });
    expect(notRunning).toMatchObject({ ok: false, error: { code: "conflict" } });
  }, 120_000);

  it("starts a stdio server inside the session's bubblewrap sandbox from the workspace (config bound in read-only); its tool runs after an approval", async () => {
    sandboxed = true;
    await mkdir(path.join(cli.cwd, "tools"), { recursive: true });
    await copyFile(pingServer, path.join(cli.cwd, "tools", "ping-mcp-server.mjs"));
    const slug = fx.workspace.slug;
    for (const view of await mcp.listMcpServers(fx.owner.id, slug)) await mcp.updateMcpServer(fx.owner.id, slug, view.id, { enabled: false });
    await mcp.createMcpServer(fx.owner.id, slug, {
      transport: "stdio",
      name: "ping",
      command: "/usr/bin/node",
      args: [path.join(cli.cwd, "tools", "ping-mcp-server.mjs")],
      env: [{ name: "PING_TOKEN", value: secretToken }],
      enabled: true,
    });
    const created = await ask<SessionView>(owner, "session:create", { workspace: slug, mode: "default", commandId: commandId() });
    if (!created.ok) throw new Error(created.error.message);
    const sessionId = created.data.id;
    await until(async () => (await sidecar.hub.liveRunner(sessionId)) !== undefined, 30_000, "a live CLI");
    let status: McpStatusReply | undefined;
    await until(
      async () => {
        const ack = await ask<McpStatusReply>(owner, "session:mcp-status", { sessionId });
        if (!ack.ok) throw new Error(ack.error.message);
        status = ack.data;
        return status.servers.length > 0 && status.servers.every((s) => s.status !== "pending");
      },
      30_000,
      "the sandboxed server to leave pending",
    );
    expect(status!.servers).toEqual([expect.objectContaining({ name: "ping", status: "connected", tools: ["ping"] })]);

    // the model calls the server's tool: asked like any tool, allowed by the owner, run, its answer back to the model
    const requested = new Promise<ApprovalView>((resolve) => owner.on("approval:requested", (a: ApprovalView) => a.sessionId === sessionId && resolve(a)));
    const prompted = await ask<CommandAccepted>(owner, "session:prompt", { sessionId, text: "[scenario:mcp-ping] ping it", commandId: commandId() });
    if (!prompted.ok) throw new Error(prompted.error.message);
    const approval = await requested;
    expect(approval.toolName).toBe("mcp__ping__ping");
    const decided = await ask(owner, "approval:decide", { approvalId: approval.id, decision: { behavior: "allow" }, commandId: commandId() });
    if (!decided.ok) throw new Error(decided.error.message);
    await until(
      async () => (await fx.db.sessionEvent.findMany({ where: { sessionId, kind: "cli" } })).some((e) => e.payload.includes('"tool_result"') && e.payload.includes("pong")),
      30_000,
      "the tool's answer in the log",
    );
    const stopped = await ask<CommandAccepted>(owner, "session:stop", { sessionId, commandId: commandId() });
    if (!stopped.ok) throw new Error(stopped.error.message);
  }, 120_000);
});
