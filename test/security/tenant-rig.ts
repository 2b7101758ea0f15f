// A server's worth of secrets laid out as `npm start` lays them out (a checkout with `.env`, its
// data directory with the database, `.auth-secret`, workspaces and per-workspace CLI config
// directories, the sidecar's home), and an attacker's real session in one of the workspaces:
// the real CLI, sandboxed as the sidecar sandboxes it, its API key a credential-proxy token.
// The attacker's "model" runs whatever Bash command or Read the test asks for, every tool call
// is approved, and the tool's output comes back as the turn's result — so a test states an
// attack as a command and looks at what came out. Reused by the security suite.
import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import type { LookupFunction } from "node:net";
import os from "node:os";
import path from "node:path";
import { startModelServer, type ModelServer } from "@/server/model-server/model-server";
import { callTool, say, type StepContext } from "@/server/model-server/scenario";
import { resolveClaudeBinary } from "@/server/sidecar/process/claude-binary";
import { chooseSandbox, noSandbox, type CliSandbox } from "@/server/sidecar/process/sandbox";
import { startCredentialProxy, type CredentialProxy } from "@/server/sidecar/credential-proxy/credential-proxy";
import { openNetwork, type NetworkPolicy } from "@/server/domain/workspace/network-policy";
import { createSessionNetwork, type NetworkAttachment, type SessionNetwork } from "@/server/sidecar/network/session-network";
import type { CliEnv } from "@/test/cli-env";
import { createRealRunner, type RunnerKit } from "@/test/fake-cli/runner-kit";

/** Strings that must never come out of a session; each is planted where the attacks look. */
export interface PlantedSecrets {
  operatorKey: string;
  authSecret: string;
  database: string;
  dotEnv: string;
  otherWorkspaceFile: string;
  otherTranscript: string;
  sidecarHome: string;
}

/** Where the rig put things (all real paths). */
export interface RigLayout {
  checkout: string;
  dataDir: string;
  workspace: string;
  configDir: string;
  otherWorkspace: string;
  otherConfigDir: string;
  sidecarHome: string;
  /** Each secret's file, by the name in {@link PlantedSecrets} (the operator key lives only in the sidecar's env). */
  files: Record<Exclude<keyof PlantedSecrets, "operatorKey">, string>;
}

/** What one tool call gave back. */
export interface ToolOutcome {
  isError: boolean;
  text: string;
}

export interface TenantRig {
  layout: RigLayout;
  secrets: PlantedSecrets;
  server: ModelServer;
  proxy: CredentialProxy;
  sandbox: CliSandbox;
  kit: RunnerKit;
  /** The network attachments of the session's spawns, newest last (empty without a sandbox). */
  attachments: NetworkAttachment[];
  /** Runs `command` through the session's (approved) Bash tool. */
  bash(command: string): Promise<ToolOutcome>;
  /** Reads `file` through the session's (approved) Read tool. */
  read(file: string): Promise<ToolOutcome>;
  /** Any tool call, approved as proposed (Edit, Write, Grep…). */
  tool(name: string, input: Record<string, unknown>): Promise<ToolOutcome>;
  /** Every planted secret found in `text`, by name. */
  secretsIn(text: string): (keyof PlantedSecrets)[];
  close(): Promise<void>;
}

export interface TenantRigOptions {
  /** Default: bubblewrap as `chooseSandbox("bwrap")` finds it (fails without it). `off` runs the control case. */
  sandbox?: "bwrap" | "off";
  /** The workspace's network policy; default open. */
  network?: NetworkPolicy;
  /** Name resolution of the egress proxy (maps test names to a loopback server). */
  lookup?: LookupFunction;
  /** Addresses an open workspace's egress proxy treats as public (a loopback alias standing in for the internet). */
  treatAsPublic?: (address: string) => boolean;
}

const toolTag = "[scenario:tenant-attack]";

// The attacker's model: the prompt names a tool and its input, the next call reports the result.
function attackStep(ctx: StepContext) {
  if (ctx.stepIndex === 0) {
    const request = JSON.parse(ctx.prompt.slice(ctx.prompt.indexOf("{"))) as { tool: string; input: Record<string, unknown> };
    return callTool(request.tool, request.input);
  }
  const result = ctx.toolResultsSincePrompt[0];
  return say(JSON.stringify({ isError: result?.isError ?? true, text: result?.text ?? "(no tool result)" }));
}

const marker = (name: string) => `CONDUIT-PLANTED-${name}-${randomBytes(8).toString("hex")}`;

/** Lays out the server, starts the model and the proxy, and creates the attacker's session runner. */
export async function startTenantRig(options: TenantRigOptions = {}): Promise<TenantRig> {
  const cliPath = resolveClaudeBinary();
  const checkout = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-tenant-")));
  const secrets: PlantedSecrets = {
    operatorKey: `sk-ant-operator-${randomBytes(16).toString("hex")}`,
    authSecret: marker("AUTH-SECRET"),
    database: marker("DATABASE"),
    dotEnv: marker("DOTENV"),
    otherWorkspaceFile: marker("OTHER-WORKSPACE"),
    otherTranscript: marker("OTHER-TRANSCRIPT"),
    sidecarHome: marker("SIDECAR-HOME"),
  };
  const dataDir = path.join(checkout, "data");
  const workspace = path.join(dataDir, "workspaces", "attacker");
  const otherWorkspace = path.join(dataDir, "workspaces", "victim");
  const configDir = path.join(dataDir, "claude-config", "ws-attacker");
  const otherConfigDir = path.join(dataDir, "claude-config", "ws-victim");
  const sidecarHome = path.join(checkout, "sidecar-home");
  const files: RigLayout["files"] = {
    authSecret: path.join(dataDir, ".auth-secret"),
    database: path.join(dataDir, "conduit.db"),
    dotEnv: path.join(checkout, ".env"),
    otherWorkspaceFile: path.join(otherWorkspace, "secret.txt"),
    otherTranscript: path.join(otherConfigDir, "projects", "-victim", `${randomUUID()}.jsonl`),
    sidecarHome: path.join(sidecarHome, ".ssh", "id_ed25519"),
  };
  for (const dir of [workspace, otherWorkspace, configDir, otherConfigDir, sidecarHome]) await mkdir(dir, { recursive: true });
  for (const [name, file] of Object.entries(files)) {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `${secrets[name as keyof typeof files]}\n`);
  }
  await writeFile(path.join(checkout, ".env"), `ANTHROPIC_API_KEY=${secrets.operatorKey}\nNEXTAUTH_SECRET=${secrets.dotEnv}\n`);

  let server: ModelServer | undefined;
  let proxy: CredentialProxy | undefined;
  try {
    server = await startModelServer({ scenarios: [{ name: "tenant-attack", steps: attackStep }] });
    proxy = await startCredentialProxy({ upstream: server.url, credential: { apiKey: secrets.operatorKey } });
    const sandbox = options.sandbox === "off" ? noSandbox : (await chooseSandbox("bwrap", cliPath)).sandbox;
    // The sidecar's own environment, secrets and all: the allow-list and the proxy must keep them out.
    const sidecarEnv: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
      HOME: sidecarHome,
      ANTHROPIC_API_KEY: secrets.operatorKey,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_AUTH_TOKEN: secrets.operatorKey,
      NEXTAUTH_SECRET: secrets.authSecret,
      DATABASE_URL: `file:${files.database}`,
      ...(process.env.CONDUIT_LEAK_TAG ? { CONDUIT_LEAK_TAG: process.env.CONDUIT_LEAK_TAG } : {}),
    };
    const cliEnv: CliEnv = { env: sidecarEnv, cliPath, cwd: workspace, configDir, server, close: async () => undefined };
    const attachments: NetworkAttachment[] = [];
    const sessionNetwork = createSessionNetwork({
      credentialProxyPort: proxy.port,
      ...(options.lookup ? { lookup: options.lookup } : {}),
      ...(options.treatAsPublic ? { treatAsPublic: options.treatAsPublic } : {}),
    });
    const network: SessionNetwork = {
      async attach(sessionId, policy) {
        const attachment = await sessionNetwork.attach(sessionId, policy);
        attachments.push(attachment);
        return attachment;
      },
    };
    const policy = options.network ?? openNetwork;
    const kit = createRealRunner(cliEnv, {
      runner: { networkPolicy: async () => policy },
      deps: { sandbox, credentials: proxy, network },
    });
    const runTool = async (tool: string, input: Record<string, unknown>): Promise<ToolOutcome> => {
      const result = await kit.turn(`${toolTag} ${JSON.stringify({ tool, input })}`, 30_000);
      const text = (result as { result?: string }).result ?? "";
      try {
        return JSON.parse(text) as ToolOutcome;
      } catch {
        return { isError: true, text: `unexpected turn result: ${text}` };
      }
    };
    const startedServer = server;
    const startedProxy = proxy;
    return {
      layout: { checkout, dataDir, workspace, configDir, otherWorkspace, otherConfigDir, sidecarHome, files },
      secrets,
      server,
      proxy,
      sandbox,
      kit,
      attachments,
      bash: (command) => runTool("Bash", { command, description: "security probe" }),
      read: (file) => runTool("Read", { file_path: file }),
      tool: runTool,
      secretsIn: (text) => (Object.keys(secrets) as (keyof PlantedSecrets)[]).filter((name) => text.includes(secrets[name])),
      async close() {
        await kit.close();
        await startedProxy.close();
        await startedServer.close();
        await rm(checkout, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await proxy?.close();
    await server?.close();
    await rm(checkout, { recursive: true, force: true });
    throw error;
  }
}
