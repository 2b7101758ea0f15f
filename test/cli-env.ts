// Everything an integration test needs to run the real `claude` CLI offline: the scripted model
// server, a throwaway CLAUDE_CONFIG_DIR and workspace, the allow-listed environment, the binary.
// `close()` undoes all of it, including any CLI a test spawned through `spawnTestCli`.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { startModelServer, type ModelServer, type ModelServerOptions } from "@/server/model-server/model-server";
import { streamJsonFlags } from "@/server/sidecar/process/build-cli-args";
import { resolveClaudeBinary } from "@/server/sidecar/process/claude-binary";

export interface CliEnvOptions extends Omit<ModelServerOptions, "port" | "host" | "log"> {
  /** Files to create in the workspace, by path relative to it. */
  files?: Record<string, string>;
  /** Extra variables for the CLI, e.g. `{ CLAUDE_CODE_MAX_RETRIES: "1" }`. */
  extraEnv?: Record<string, string>;
}

export interface CliEnv {
  /** The complete environment to spawn the CLI with: nothing else leaks in, and HOME is a temp dir. */
  env: Record<string, string>;
  cliPath: string;
  /** The workspace: spawn the CLI here. A real path, as the CLI reports it. */
  cwd: string;
  configDir: string;
  server: ModelServer;
  close(): Promise<void>;
}

/** The flags every host spawns the CLI with (see the protocol reference, section 1). */
export const streamJsonArgs = streamJsonFlags;

// Children spawned through spawnTestCli, per environment, so close() can stop stragglers.
const childrenOf = new WeakMap<CliEnv, Set<TestCli>>();

/** Starts the model server (free port) and creates the temp dirs. */
export async function startCliEnv(options: CliEnvOptions = {}): Promise<CliEnv> {
  const cliPath = resolveClaudeBinary();
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-cli-")));
  const cwd = path.join(root, "workspace");
  const configDir = path.join(root, "config");
  const home = path.join(root, "home");
  const { files = {}, extraEnv, ...serverOptions } = options;
  let server: ModelServer;
  try {
    await Promise.all([mkdir(cwd), mkdir(configDir), mkdir(home)]);
    for (const [file, content] of Object.entries(files)) {
      const target = path.join(cwd, file);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    server = await startModelServer(serverOptions);
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    // A fresh HOME: the Bash tool snapshots the login shell, and a real ~/.bashrc costs seconds per
    // test and leaks the developer's setup into the run.
    HOME: home,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: "sk-ant-conduit-test",
    CLAUDE_CONFIG_DIR: configDir,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    // marks the process as this test run's, for the leak check (test/leak-check.global.ts)
    ...(process.env.CONDUIT_LEAK_TAG ? { CONDUIT_LEAK_TAG: process.env.CONDUIT_LEAK_TAG } : {}),
    ...extraEnv,
  };
  let closing: Promise<void> | undefined;
  const cliEnv: CliEnv = {
    env,
    cliPath,
    cwd,
    configDir,
    server,
    close() {
      closing ??= (async () => {
        await Promise.all([...(childrenOf.get(cliEnv) ?? [])].map((child) => child.stop()));
        await server.close();
        await rm(root, { recursive: true, force: true });
      })();
      return closing;
    },
  };
  childrenOf.set(cliEnv, new Set());
  return cliEnv;
}

/** A CLI child driven line by line: enough for tests that do not go through the sidecar. */
export interface TestCli {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every stdout line parsed, in order. */
  readonly messages: readonly Record<string, unknown>[];
  readonly stderr: string;
  /** Writes one NDJSON line to stdin. */
  send(message: unknown): void;
  /** The first message (already received or future) matching `predicate`, after index `from`. */
  waitFor(
    predicate: (message: Record<string, unknown>) => boolean,
    options?: { timeoutMs?: number; from?: number },
  ): Promise<Record<string, unknown>>;
  /** Close stdin, then SIGTERM and SIGKILL the process group; resolves with the exit code (or signal). */
  stop(): Promise<number | NodeJS.Signals | null>;
}

/** Spawns the CLI (argv array, own process group, workspace cwd, the env's variables only). */
export function spawnTestCli(cliEnv: CliEnv, extraArgs: readonly string[] = []): TestCli {
  const child = spawn(cliEnv.cliPath, [...streamJsonArgs, ...extraArgs], {
    cwd: cliEnv.cwd,
    // Next's types make NODE_ENV mandatory on ProcessEnv; the CLI must not get one from us.
    env: cliEnv.env as NodeJS.ProcessEnv,
    stdio: ["pipe", "pipe", "pipe"],
    // Own group: stop() must also reach the shells the CLI's Bash tool started.
    detached: true,
  });
  const messages: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let stderr = "";
  let exit: Promise<number | NodeJS.Signals | null> | undefined;
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal));
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  createInterface({ input: child.stdout }).on("line", (line) => {
    try {
      messages.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      messages.push({ type: "unparsed", raw: line });
    }
    for (const wake of waiters) wake();
  });
  child.stdin.on("error", () => undefined);

  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // the group is already gone
    }
  };
  const within = (ms: number) =>
    Promise.race([
      exited.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref()),
    ]);

  const handle: TestCli = {
    child,
    messages,
    get stderr() {
      return stderr;
    },
    send(message) {
      child.stdin.write(`${JSON.stringify(message)}\n`);
    },
    waitFor(predicate, { timeoutMs = 20_000, from = 0 } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.slice(from).find(predicate);
          if (found === undefined) return false;
          done();
          resolve(found);
          return true;
        };
        const onExit = () => {
          if (check()) return;
          done();
          reject(new Error(`CLI exited before the expected message; stderr: ${stderr.slice(-2000)}`));
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(
              `no matching CLI message within ${timeoutMs} ms; last: ${JSON.stringify(messages.at(-1))?.slice(0, 500)}`,
            ),
          );
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(wake);
          child.off("exit", onExit);
        };
        const wake = () => void check();
        if (check()) return;
        waiters.add(wake);
        child.once("exit", onExit);
      });
    },
    stop() {
      exit ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.stdin.end();
          if (!(await within(3000))) {
            signalGroup("SIGTERM");
            if (!(await within(3000))) signalGroup("SIGKILL");
          }
        }
        // The Bash tool's shells share the group and may outlive the CLI.
        signalGroup("SIGKILL");
        const result = await exited;
        childrenOf.get(cliEnv)?.delete(handle);
        return result;
      })();
      return exit;
    },
  };
  childrenOf.get(cliEnv)?.add(handle);
  return handle;
}

export interface TurnOutcome {
  result: Record<string, unknown>;
  /** The `can_use_tool` requests of the turn, in order. */
  permissionRequests: { toolName: string; input: Record<string, unknown> }[];
}

/**
 * Sends a prompt and plays a host that answers every `can_use_tool` with the input `answer` returns
 * (default: allow as proposed) until the turn's `result`.
 */
export async function runTurn(
  cli: TestCli,
  text: string,
  answer: (toolName: string, input: Record<string, unknown>) => Record<string, unknown> = (_name, input) => input,
  timeoutMs = 20_000,
): Promise<TurnOutcome> {
  let from = cli.messages.length;
  const permissionRequests: TurnOutcome["permissionRequests"] = [];
  cli.send(userMessage(text));
  for (;;) {
    const message = await cli.waitFor(
      (m) =>
        m.type === "result" ||
        (m.type === "control_request" && (m.request as { subtype?: string }).subtype === "can_use_tool"),
      { from, timeoutMs },
    );
    from = cli.messages.indexOf(message) + 1;
    if (message.type === "result") return { result: message, permissionRequests };
    const request = message.request as { tool_name: string; input: Record<string, unknown> };
    permissionRequests.push({ toolName: request.tool_name, input: request.input });
    cli.send(allowTool(String(message.request_id), answer(request.tool_name, request.input)));
  }
}

/** A stream-json user message carrying `text`. */
export function userMessage(text: string): Record<string, unknown> {
  return {
    type: "user",
    message: { role: "user", content: [{ type: "text", text }] },
    parent_tool_use_id: null,
    session_id: "",
  };
}

/** The host's answer to a `can_use_tool` control request. */
export function allowTool(requestId: string, updatedInput: Record<string, unknown>): Record<string, unknown> {
  return {
    type: "control_response",
    response: { subtype: "success", request_id: requestId, response: { behavior: "allow", updatedInput } },
  };
}
