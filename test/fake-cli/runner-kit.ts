// Runs a real session runner in integration tests and the benchmark: against the real CLI (with
// test/cli-env's model server and environment) or against the fault-injecting fake CLI. Collects
// every RunnerEvent and waits for them; `close()` disposes the runner, so no child outlives a test.
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { SessionState } from "@/server/domain/session/session-state";
import type { PermissionDecision } from "@/server/shared/claude-protocol/encode";
import type { CliMessage, ResultMessage } from "@/server/shared/claude-protocol/messages";
import type { SupervisorConfig } from "@/server/sidecar/process/supervisor-config";
import { createSessionRunner, type SessionRunnerDeps } from "@/server/sidecar/session/session-runner";
import type {
  PermissionDecider,
  RunnerEvent,
  SessionRunner,
  SessionRunnerOptions,
} from "@/server/sidecar/session/session-runner-contract";
import type { CliEnv } from "@/test/cli-env";

/** The fake CLI's script. */
export const fakeCliScript = fileURLToPath(new URL("./fake-cli.mjs", import.meta.url));

/** The fake CLI's modes (see fake-cli.mjs). */
export type FakeCliMode =
  | "behave"
  | "hang"
  | "garbage"
  | "ignore-sigterm"
  | "grandchild"
  | "setsid-grandchild"
  | "flood"
  | "hog"
  | "crash-after"
  | "permission"
  | "stream";

export interface RunnerKitOptions {
  runner?: Partial<SessionRunnerOptions>;
  deps?: Partial<SessionRunnerDeps>;
  config?: Partial<SupervisorConfig>;
  decide?: PermissionDecider;
}

export interface RunnerKit {
  runner: SessionRunner;
  options: SessionRunnerOptions;
  events: RunnerEvent[];
  /** Decoded stdout messages so far. */
  messages(): CliMessage[];
  /** The first event (from index `from`) matching `predicate`, waiting up to `timeoutMs`. */
  waitFor(
    predicate: (event: RunnerEvent) => boolean,
    options?: { from?: number; timeoutMs?: number },
  ): Promise<RunnerEvent>;
  /** The first stdout message (from event index `from`) matching `predicate`. */
  waitForMessage<T extends CliMessage = CliMessage>(
    predicate: (message: CliMessage) => boolean,
    options?: { from?: number; timeoutMs?: number },
  ): Promise<T>;
  /** Resolves when the runner's state matches (now or later). */
  waitForState(predicate: (state: SessionState) => boolean, timeoutMs?: number): Promise<SessionState>;
  /** Sends a prompt and resolves with the next result. */
  turn(text: string, timeoutMs?: number): Promise<ResultMessage>;
  /** pids of every child spawned so far. */
  pids(): number[];
  close(): Promise<void>;
}

type ToolInput = Extract<PermissionDecision, { behavior: "allow" }>["updatedInput"];

/** Allows every tool call as the model proposed it. */
export const allowAsProposed: PermissionDecider = async ({ request }) => ({
  behavior: "allow",
  updatedInput: request.input as ToolInput,
});

function wrap(runner: SessionRunner, options: SessionRunnerOptions, cleanup: () => Promise<void>): RunnerKit {
  const events: RunnerEvent[] = [];
  const waiters = new Set<() => void>();
  runner.onDidEvent((event) => {
    events.push(event);
    for (const wake of [...waiters]) wake();
  });

  const waitFor: RunnerKit["waitFor"] = (predicate, { from = 0, timeoutMs = 20_000 } = {}) =>
    new Promise((resolve, reject) => {
      let index = from;
      const check = () => {
        for (; index < events.length; index++) {
          const event = events[index]!;
          if (predicate(event)) {
            done();
            resolve(event);
            return;
          }
        }
      };
      const timer = setTimeout(() => {
        done();
        const last = events.slice(-5).map((event) => JSON.stringify(event).slice(0, 300));
        reject(new Error(`no matching runner event within ${timeoutMs} ms; last events:\n${last.join("\n")}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  const kit: RunnerKit = {
    runner,
    options,
    events,
    messages: () => events.flatMap((event) => (event.type === "line" ? [event.message] : [])),
    waitFor,
    async waitForMessage<T extends CliMessage>(
      predicate: (message: CliMessage) => boolean,
      waitOptions: { from?: number; timeoutMs?: number } = {},
    ): Promise<T> {
      const event = await waitFor((e) => e.type === "line" && predicate(e.message), waitOptions);
      return (event as Extract<RunnerEvent, { type: "line" }>).message as T;
    },
    async waitForState(predicate, timeoutMs = 20_000) {
      if (predicate(runner.state)) return runner.state;
      await waitFor((event) => event.type === "state" && predicate(event.state), { from: events.length, timeoutMs });
      return runner.state;
    },
    async turn(text, timeoutMs = 20_000) {
      const from = events.length;
      const uuid = randomUUID();
      await runner.prompt({ uuid, text });
      return kit.waitForMessage<ResultMessage>((m) => m.type === "result", { from, timeoutMs });
    },
    pids: () => events.flatMap((event) => (event.type === "process" && event.phase === "spawned" ? [event.pid] : [])),
    async close() {
      await runner.dispose();
      await cleanup();
    },
  };
  return kit;
}

/** A runner of the real CLI in `cliEnv`'s workspace, with its model server and environment. */
export function createRealRunner(cliEnv: CliEnv, kitOptions: RunnerKitOptions = {}): RunnerKit {
  const options: SessionRunnerOptions = {
    sessionId: `session-${randomUUID()}`,
    workspaceRoot: cliEnv.cwd,
    configDir: cliEnv.configDir,
    claudeSessionId: randomUUID(),
    resume: false,
    permissionMode: "default",
    ...kitOptions.runner,
  };
  const runner = createSessionRunner(options, {
    cliPath: cliEnv.cliPath,
    decidePermission: kitOptions.decide ?? allowAsProposed,
    baseEnv: cliEnv.env,
    config: { stdinGraceMs: 3000, termGraceMs: 3000, ...kitOptions.config },
    ...kitOptions.deps,
  });
  return wrap(runner, options, async () => undefined);
}

/** A runner of the fake CLI in `mode`, in a temp workspace; `extraArgs` go before the claude flags. */
export async function createFakeRunner(
  mode: FakeCliMode,
  kitOptions: RunnerKitOptions & { extraArgs?: string[] } = {},
): Promise<RunnerKit> {
  const root = await mkdtemp(path.join(os.tmpdir(), "conduit-fake-cli-"));
  const options: SessionRunnerOptions = {
    sessionId: `session-${randomUUID()}`,
    workspaceRoot: root,
    configDir: path.join(root, "config"),
    claudeSessionId: randomUUID(),
    resume: false,
    permissionMode: "default",
    ...kitOptions.runner,
  };
  const runner = createSessionRunner(options, {
    cliPath: process.execPath,
    argsPrefix: [fakeCliScript, "--fake-mode", mode, ...(kitOptions.extraArgs ?? [])],
    decidePermission: kitOptions.decide ?? allowAsProposed,
    // process.env carries CONDUIT_LEAK_TAG in the integration run; the allow-list passes it on.
    baseEnv: process.env,
    config: kitOptions.config,
    ...kitOptions.deps,
  });
  return wrap(runner, options, () => rm(root, { recursive: true, force: true }));
}
