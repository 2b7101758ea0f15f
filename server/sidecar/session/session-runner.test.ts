// The session runner over fake children and fake timers: spawn, lines and events, permissions,
// control requests, and the supervision rules (escalation, restarts, watchdogs, cull, admission).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ControlRequestError } from "@/server/shared/claude-protocol/control-channel";
import { EncodeError } from "@/server/shared/claude-protocol/encode";
import { AppError } from "@/server/shared/errors/app-error";
import { createAdmission } from "@/server/sidecar/process/admission";
import type { SupervisorConfig } from "@/server/sidecar/process/supervisor-config";
import { createFakeSpawner, frames, type FakeChild, type FakeChildBehaviour } from "@/test/fake-cli/fake-child";
import { createSessionRunner, type SessionRunnerDeps } from "./session-runner";
import type { PermissionDecider, RunnerEvent, SessionRunner, SessionRunnerOptions } from "./session-runner-contract";

const CLAUDE_ID = "0b6a3b8e-4a35-4c47-9a4e-1f1d2c3b4a59";
const UUID_1 = "11111111-1111-4111-8111-111111111111";
const UUID_2 = "22222222-2222-4222-8222-222222222222";

const config: Partial<SupervisorConfig> = {
  stdinGraceMs: 1000,
  termGraceMs: 2000,
  killWaitMs: 3000,
  exitDrainMs: 50,
  maxRestarts: 5,
  restartBaseMs: 100,
  restartMaxMs: 1000,
  stallMs: 10_000,
  idleCullMs: 60_000,
  controlTimeoutMs: 5000,
};

const baseOptions: SessionRunnerOptions = {
  sessionId: "session-1",
  workspaceRoot: "/ws",
  configDir: "/data/claude-config/ws-1",
  claudeSessionId: CLAUDE_ID,
  resume: false,
  permissionMode: "default",
};

interface Setup {
  runner: SessionRunner;
  spawner: ReturnType<typeof createFakeSpawner>;
  events: RunnerEvent[];
  statuses: () => string[];
  transcript: { exists: boolean };
}

const runners: SessionRunner[] = [];

function setup(
  options: {
    behaviour?: FakeChildBehaviour | ((index: number) => FakeChildBehaviour);
    runner?: Partial<SessionRunnerOptions>;
    deps?: Partial<SessionRunnerDeps>;
    config?: Partial<SupervisorConfig>;
  } = {},
): Setup {
  const spawner = createFakeSpawner(options.behaviour ?? {});
  const transcript = { exists: false };
  const runner = createSessionRunner(
    { ...baseOptions, ...options.runner },
    {
      cliPath: "/usr/bin/claude",
      decidePermission: async () => ({ behavior: "deny", message: "no decider in this test" }),
      baseEnv: { PATH: "/usr/bin", HOME: "/home/c", NEXTAUTH_SECRET: "s3cret", CONDUIT_LEAK_TAG: "tag-1" },
      spawn: spawner.spawn,
      killGroup: spawner.killGroup,
      isRoot: false,
      config: { ...config, ...options.config },
      transcriptExists: () => transcript.exists,
      guardCliConfig: async () => undefined,
      ...options.deps,
    },
  );
  runners.push(runner);
  const events: RunnerEvent[] = [];
  runner.onDidEvent((event) => events.push(event));
  const statuses = () => events.flatMap((event) => (event.type === "state" ? [event.state.status] : []));
  return { runner, spawner, events, statuses, transcript };
}

/** Plays one turn on `child` for the prompt `uuid`. */
function playTurn(child: FakeChild, uuid: string, text = "hello"): void {
  child.print(frames.init(CLAUDE_ID));
  child.print(frames.assistant(CLAUDE_ID, text));
  child.print(frames.result(CLAUDE_ID, [uuid]));
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});

afterEach(async () => {
  for (const runner of runners.splice(0)) {
    const done = runner.dispose();
    await vi.runAllTimersAsync();
    await done;
  }
  expect(vi.getTimerCount()).toBe(0);
  vi.useRealTimers();
});

describe("spawn", () => {
  it("runs each child through the sandbox with its own proxy token, revoked when that child ends", async () => {
    const issued: { token: string; revoked: boolean }[] = [];
    const credentials = {
      issue: () => {
        const grant = { token: `tok-${issued.length}`, revoked: false };
        issued.push(grant);
        return {
          token: grant.token,
          env: { ANTHROPIC_API_KEY: grant.token, ANTHROPIC_BASE_URL: "http://127.0.0.1:4999" },
          revoke: () => void (grant.revoked = true),
        };
      },
    };
    const sandbox = {
      mode: "bwrap" as const,
      wrap: (launch: { file: string; args: readonly string[]; cwd: string; env: Record<string, string> }, dirs: { workspaceRoot: string; configDir: string }) => ({
        ...launch,
        file: "/usr/bin/bwrap",
        args: ["--bind", dirs.workspaceRoot, dirs.configDir, "--", launch.file, ...launch.args],
      }),
    };
    const { runner, spawner } = setup({ deps: { credentials, sandbox, baseEnv: { PATH: "/usr/bin", ANTHROPIC_API_KEY: "sk-ant-operator" } } });
    await runner.start();
    expect(spawner.last.file).toBe("/usr/bin/bwrap");
    expect(spawner.last.args.slice(0, 5)).toEqual(["--bind", "/ws", "/data/claude-config/ws-1", "--", "/usr/bin/claude"]);
    expect(spawner.last.options.env).toMatchObject({ ANTHROPIC_API_KEY: "tok-0", ANTHROPIC_BASE_URL: "http://127.0.0.1:4999" });
    expect(JSON.stringify(spawner.last.options.env)).not.toContain("sk-ant-operator");
    spawner.last.exit(1); // a crash: the restart gets a new token, the dead one is revoked
    await vi.advanceTimersByTimeAsync(10_000);
    expect(issued.map((grant) => grant.revoked)).toEqual([true, false]);
    expect(spawner.last.options.env.ANTHROPIC_API_KEY).toBe("tok-1");
  });

  it("starts each child in cgroups of its own, empties them at its end, and names the memory cap on an OOM kill", async () => {
    const made: { name: string; destroyed: boolean; oomKills: number }[] = [];
    const cgroups = {
      kind: "cgroup" as const,
      layout: { version: "v1" as const, memory: "/cg/memory/conduit/n" },
      caps: { memoryMb: 200, pidsMax: 64 },
      async create(sessionId: string) {
        const cgroup = { name: `${sessionId}-${made.length + 1}`, destroyed: false, oomKills: 0 };
        made.push(cgroup);
        return {
          name: cgroup.name,
          procsFiles: [`/cg/memory/conduit/n/${cgroup.name}/cgroup.procs`],
          wrap: (launch: { file: string; args: readonly string[]; cwd: string; env: Record<string, string> }) => ({
            ...launch,
            file: "/bin/sh",
            args: ["enter.sh", `/cg/memory/conduit/n/${cgroup.name}/cgroup.procs`, "--", launch.file, ...launch.args],
          }),
          facts: () => ({ oomKills: cgroup.oomKills }),
          pids: () => [],
          destroy: async () => void (cgroup.destroyed = true),
        };
      },
      cleanLeftovers: async () => ({ removed: [], killed: 0 }),
      close: async () => undefined,
    };
    const { runner, spawner, events } = setup({ deps: { cgroups } });
    await runner.start();
    expect(spawner.last.file).toBe("/bin/sh");
    expect(spawner.last.args.slice(0, 4)).toEqual(["enter.sh", "/cg/memory/conduit/n/session-1-1/cgroup.procs", "--", "/usr/bin/claude"]);
    // a plain crash: no reason, the cgroup emptied
    spawner.last.exit(null, "SIGKILL");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(made[0]!.destroyed).toBe(true);
    expect(events.filter((e) => e.type === "process" && e.phase === "exited").at(-1)).not.toHaveProperty("reason");
    // the restarted child is killed by the OOM killer at the cap
    expect(made).toHaveLength(2);
    made[1]!.oomKills = 1;
    spawner.last.exit(null, "SIGKILL");
    await vi.advanceTimersByTimeAsync(0);
    expect(made[1]!.destroyed).toBe(true);
    expect(events.filter((e) => e.type === "process" && e.phase === "exited").at(-1)).toMatchObject({
      signal: "SIGKILL",
      expected: false,
      reason: expect.stringContaining("memory cap of 200 MB"),
    });
  });

  it("starts the CLI with the stream-json flags, the allow-listed env, and the workspace as cwd", async () => {
    const { runner, spawner, events } = setup({ runner: { model: "claude-sonnet-4-5", maxBudgetUsd: 2 } });
    await runner.start();
    const child = spawner.last;
    expect(child.file).toBe("/usr/bin/claude");
    expect(child.args).toEqual([
      "--output-format",
      "stream-json",
      "--input-format",
      "stream-json",
      "--verbose",
      "--permission-prompt-tool",
      "stdio",
      "--session-id",
      CLAUDE_ID,
      "--permission-mode",
      "default",
      "--model",
      "claude-sonnet-4-5",
      "--include-partial-messages",
      "--max-budget-usd",
      "2",
      "--setting-sources",
      "",
      "--add-dir",
      ".",
      "--settings",
      '{"disableAllHooks":true,"env":{"CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD":"1"}}',
    ]);
    expect(child.options.cwd).toBe("/ws");
    expect(child.options.env).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/c",
      CONDUIT_LEAK_TAG: "tag-1",
      CLAUDE_CONFIG_DIR: "/data/claude-config/ws-1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
    });
    expect(events[0]).toEqual({ type: "process", phase: "spawned", pid: child.pid, resumed: false });
    expect(runner.state).toMatchObject({ status: "idle", claudeSessionId: CLAUDE_ID, processRunning: true });
  });

  it("resumes with --resume when asked to", async () => {
    const { runner, spawner } = setup({ runner: { resume: true } });
    await runner.start();
    expect(spawner.last.args).toContain("--resume");
    expect(spawner.last.args).not.toContain("--session-id");
  });

  it("reports a CLI that cannot be started as unavailable and frees its admission slot", async () => {
    const admission = createAdmission({ maxLive: 1, minFreeBytes: 0, freeMemory: () => 1e12 });
    const { runner } = setup({
      behaviour: { spawnError: Object.assign(new Error("spawn /usr/bin/claude ENOENT"), { code: "ENOENT" }) },
      deps: { admission },
    });
    await expect(runner.start()).rejects.toMatchObject({ name: "CliSpawnError", code: "unavailable" });
    expect(admission.liveCount).toBe(0);
  });
});

describe("turns", () => {
  it("writes the prompt with its uuid, then emits every line before the state it causes", async () => {
    const { runner, spawner, events } = setup();
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "hello there" });
    const child = spawner.last;
    expect(child.lines).toEqual([
      {
        type: "user",
        message: { role: "user", content: "hello there" },
        parent_tool_use_id: null,
        session_id: "",
        uuid: UUID_1,
      },
    ]);
    expect(runner.state.status).toBe("running");
    events.length = 0;
    playTurn(child, UUID_1);
    expect(
      events.map((event) =>
        event.type === "line"
          ? `line:${event.message.type}`
          : event.type === "state"
            ? `state:${event.state.status}`
            : event.type,
      ),
    ).toEqual(["line:system", "state:running", "line:assistant", "line:result", "state:idle"]);
    expect(runner.state.lastTurn).toMatchObject({ promptUuids: [UUID_1] });
  });

  it("keeps one process across turns and lets a listener act during an event without reordering", async () => {
    const { runner, spawner, events } = setup();
    await runner.start();
    const order: string[] = [];
    runner.onDidEvent((event) => {
      order.push(event.type === "line" ? `line:${event.message.type}` : event.type);
      if (
        event.type === "line" &&
        event.message.type === "result" &&
        order.filter((o) => o === "line:result").length === 1
      ) {
        void runner.prompt({ uuid: UUID_2, text: "again" });
      }
    });
    await runner.prompt({ uuid: UUID_1, text: "one" });
    playTurn(spawner.last, UUID_1);
    await vi.advanceTimersByTimeAsync(0);
    playTurn(spawner.last, UUID_2);
    expect(spawner.children).toHaveLength(1);
    expect(spawner.last.lines.filter((line) => line.type === "user")).toHaveLength(2);
    expect(events.filter((event) => event.type === "line" && event.message.type === "result")).toHaveLength(2);
    expect(runner.state.status).toBe("idle");
  });

  it("refuses a prompt the CLI would die of before spawning anything", async () => {
    const { runner, spawner } = setup();
    await expect(runner.prompt({ uuid: UUID_1, text: "   " })).rejects.toBeInstanceOf(EncodeError);
    await expect(runner.prompt({ uuid: "not-a-uuid", text: "hi" })).rejects.toBeInstanceOf(EncodeError);
    expect(spawner.children).toHaveLength(0);
  });

  it("reports bad lines and an oversized line, and goes on with the next good one", async () => {
    const { runner, spawner, events } = setup({ config: { maxLineBytes: 1000 } });
    await runner.start();
    spawner.last.print("this is not json");
    spawner.last.print(`{"type":"assistant","pad":"${"x".repeat(5000)}"}`);
    spawner.last.printStderr("warning: something\npartial");
    spawner.last.print(frames.init(CLAUDE_ID));
    expect(events.filter((event) => event.type !== "state" && event.type !== "process")).toEqual([
      { type: "bad-line", raw: "this is not json", error: expect.stringContaining("Invalid JSON") },
      { type: "bad-line", raw: "", error: expect.stringContaining("Line longer than 1000 bytes") },
      { type: "stderr", text: "warning: something" },
      { type: "line", raw: expect.any(String), message: expect.objectContaining({ type: "system", subtype: "init" }) },
    ]);
  });

  it("closes the turn at result even though the process keeps running", async () => {
    const { runner, spawner } = setup();
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "hi" });
    playTurn(spawner.last, UUID_1);
    expect(spawner.last.exited).toBe(false);
    expect(runner.state).toMatchObject({ status: "idle", turn: null, pendingPrompts: [] });
  });
});

describe("permissions and control requests", () => {
  it("hands can_use_tool to the decider and writes its answer", async () => {
    const decide = vi.fn<PermissionDecider>(async ({ request }) => ({
      behavior: "allow",
      updatedInput: { ...request.input, command: "echo changed" },
    }));
    const { runner, spawner, statuses } = setup({ deps: { decidePermission: decide } });
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "run it" });
    spawner.last.print(frames.init(CLAUDE_ID));
    spawner.last.print(frames.canUseTool("req-1", "Bash", { command: "echo hi" }));
    expect(runner.state.status).toBe("awaiting-approval");
    expect(decide).toHaveBeenCalledWith(
      expect.objectContaining({ requestId: "req-1", request: expect.objectContaining({ tool_name: "Bash" }) }),
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(spawner.last.lines.at(-1)).toEqual({
      type: "control_response",
      response: {
        subtype: "success",
        request_id: "req-1",
        response: { behavior: "allow", updatedInput: { command: "echo changed" } },
      },
    });
    expect(runner.state.status).toBe("running");
    expect(statuses()).toContain("awaiting-approval");
  });

  it("names the subagent that asks, with its task's description from task_started", async () => {
    const decide = vi.fn<PermissionDecider>(async () => ({ behavior: "allow", updatedInput: {} }));
    const { runner, spawner } = setup({ deps: { decidePermission: decide } });
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "delegate" });
    spawner.last.print(frames.init(CLAUDE_ID));
    const task = { type: "system", session_id: CLAUDE_ID, uuid: UUID_2, tool_use_id: "toolu_agent" };
    spawner.last.print({ ...task, subtype: "task_started", task_id: "a1", description: "Run the tests", task_type: "local_agent" });
    spawner.last.print({ ...task, subtype: "task_started", task_id: "b1", description: "Long build", task_type: "local_bash" });
    const asked = (id: string, agentId?: string) => {
      const frame = frames.canUseTool(id, "Bash", { command: "make test" });
      (frame.request as Record<string, unknown>).agent_id = agentId;
      spawner.last.print(frame);
    };
    asked("req-1", "a1");
    asked("req-2");
    // an agent this process never reported (its task_started lost): named, without a description
    asked("req-3", "zz");
    // a background shell's task id is not an agent
    asked("req-4", "b1");
    const agents = decide.mock.calls.map(([question]) => [question.requestId, question.agent]);
    expect(agents).toEqual([
      ["req-1", { id: "a1", description: "Run the tests" }],
      ["req-2", undefined],
      ["req-3", { id: "zz", description: null }],
      ["req-4", { id: "b1", description: null }],
    ]);
  });

  it("aborts the decider's signal on control_cancel_request and on exit", async () => {
    const signals: AbortSignal[] = [];
    const decide: PermissionDecider = ({ signal }) => {
      signals.push(signal);
      return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    };
    const { runner, spawner } = setup({ deps: { decidePermission: decide } });
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "x" });
    spawner.last.print(frames.canUseTool("req-1"));
    spawner.last.print({ type: "control_cancel_request", request_id: "req-1" });
    expect(signals[0]!.aborted).toBe(true);
    expect(runner.state.pendingApprovals).toEqual([]);
    spawner.last.print(frames.canUseTool("req-2"));
    expect(runner.state.status).toBe("awaiting-approval");
    spawner.last.exit(null, "SIGKILL");
    await vi.advanceTimersByTimeAsync(0);
    expect(signals[1]!.aborted).toBe(true);
    // Neither cancelled request was answered.
    expect(spawner.children[0]!.lines.filter((line) => line.type === "control_response")).toEqual([]);
  });

  it("resolves setPermissionMode with the mode the CLI confirmed, and types refusals", async () => {
    const { runner, spawner } = setup();
    await runner.start();
    const child = spawner.last;
    const accepted = runner.setPermissionMode("acceptEdits");
    const [request] = child.controlRequests("set_permission_mode");
    expect(request).toMatchObject({ request: { subtype: "set_permission_mode", mode: "acceptEdits" } });
    child.answer(request!, { mode: "acceptEdits" });
    await expect(accepted).resolves.toBe("acceptEdits");

    const refused = runner.setPermissionMode("bypassPermissions");
    const second = child.controlRequests("set_permission_mode")[1]!;
    child.print({
      type: "control_response",
      response: {
        subtype: "error",
        request_id: second.request_id,
        error: "not launched with bypass",
        error_code: "bypass_not_launched",
      },
    });
    await expect(refused).rejects.toMatchObject({ name: "ControlRequestError", errorCode: "bypass_not_launched" });
    await expect(refused).rejects.toBeInstanceOf(ControlRequestError);

    const before = child.lines.length;
    await expect(runner.setPermissionMode("yolo" as never)).rejects.toBeInstanceOf(EncodeError);
    expect(child.lines).toHaveLength(before);
    expect(child.exited).toBe(false);
  });

  it("sends interrupt and set_model over the control channel", async () => {
    const { runner, spawner } = setup();
    await runner.start();
    const child = spawner.last;
    const interrupted = runner.interrupt();
    child.answer(child.controlRequests("interrupt")[0]!, { still_queued: [] });
    await expect(interrupted).resolves.toBeUndefined();
    const model = runner.setModel("sonnet");
    child.answer(child.controlRequests("set_model")[0]!, { model: "claude-sonnet-4-5" });
    await expect(model).resolves.toBe("claude-sonnet-4-5");
  });

  it("keeps the mode and model for the next spawn", async () => {
    const { runner, spawner } = setup();
    await runner.start();
    const child = spawner.last;
    const mode = runner.setPermissionMode("plan");
    child.answer(child.controlRequests("set_permission_mode")[0]!, { mode: "plan" });
    await mode;
    await runner.stop();
    await runner.setModel("opus");
    await runner.start();
    expect(spawner.last.args.join(" ")).toContain("--permission-mode plan --model opus");
  });
});

describe("shutdown escalation", () => {
  it("closes stdin and waits, then SIGTERMs the group, waits, then SIGKILLs it", async () => {
    const { runner, spawner, events } = setup({ behaviour: { onStdinEnd: "ignore", onSigterm: "ignore" } });
    await runner.start();
    const child = spawner.last;
    const t0 = Date.now();
    const stopped = runner.stop();
    await vi.advanceTimersByTimeAsync(0);
    expect(child.stdin.writableEnded).toBe(true);
    expect(spawner.signals).toEqual([]);
    await vi.advanceTimersByTimeAsync(999);
    expect(spawner.signals).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(spawner.signals).toEqual([{ pid: child.pid, signal: "SIGTERM", at: t0 + 1000 }]);
    await vi.advanceTimersByTimeAsync(2000);
    await stopped;
    expect(spawner.signals.map(({ signal, at }) => [signal, at - t0])).toEqual([
      ["SIGTERM", 1000],
      ["SIGKILL", 3000],
      ["SIGKILL", 3000], // the sweep after the exit: grandchildren die with the group
    ]);
    expect(events.at(-2)).toMatchObject({ type: "process", phase: "exited", signal: "SIGKILL", expected: true });
    expect(runner.state).toMatchObject({ status: "stopped", exit: { expected: true } });
  });

  it("stops at the first step when the CLI exits on stdin end", async () => {
    const { runner, spawner } = setup();
    await runner.start();
    const stopping = runner.stop();
    await vi.advanceTimersByTimeAsync(0);
    await stopping;
    expect(spawner.signals.map((s) => s.signal)).toEqual(["SIGKILL"]); // the sweep only
    expect(runner.state).toMatchObject({ status: "stopped", exit: { code: 0, expected: true } });
  });

  it("goes from SIGTERM to done when the CLI honours it", async () => {
    const { runner, spawner } = setup({ behaviour: { onStdinEnd: "ignore" } });
    await runner.start();
    const stopping = runner.stop();
    await vi.advanceTimersByTimeAsync(1000);
    await stopping;
    expect(spawner.signals.map((s) => s.signal)).toEqual(["SIGTERM", "SIGKILL"]);
    expect(runner.state).toMatchObject({ status: "stopped", exit: { signal: "SIGTERM" } });
  });
});

describe("crashes and restarts", () => {
  it("restarts with --resume after a crash, with backoff, and the next prompt works", async () => {
    const { runner, spawner, statuses, transcript } = setup();
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "one" });
    playTurn(spawner.last, UUID_1);
    await runner.prompt({ uuid: UUID_2, text: "two" });
    transcript.exists = true;
    const crashedAt = Date.now();
    spawner.last.exit(null, "SIGKILL");
    expect(runner.state).toMatchObject({ status: "starting", restartAttempt: 1, restartAt: crashedAt + 100 });
    expect(statuses()).toContain("crashed");
    await vi.advanceTimersByTimeAsync(100);
    expect(spawner.children).toHaveLength(2);
    expect(spawner.spawnedAt[1]! - crashedAt).toBe(100);
    expect(spawner.last.args).toEqual(expect.arrayContaining(["--resume", CLAUDE_ID]));
    expect(runner.state).toMatchObject({ status: "idle", claudeSessionId: CLAUDE_ID });
    await runner.prompt({ uuid: UUID_1, text: "three" });
    playTurn(spawner.last, UUID_1);
    expect(runner.state).toMatchObject({ status: "idle", consecutiveRestarts: 0 });
  });

  it("backs off exponentially and declares the session dead after 5 restarts in a row", async () => {
    const admission = createAdmission({ maxLive: 5, minFreeBytes: 0, freeMemory: () => 1e12 });
    const { runner, spawner } = setup({ deps: { admission } });
    await runner.start();
    const crashedAt: number[] = [];
    for (let crash = 1; crash <= 6; crash++) {
      crashedAt.push(Date.now());
      spawner.last.exit(1);
      await vi.advanceTimersByTimeAsync(2000);
    }
    expect(spawner.children).toHaveLength(6);
    const delays = spawner.spawnedAt.slice(1).map((at, i) => at - crashedAt[i]!);
    expect(delays).toEqual([100, 200, 400, 800, 1000]);
    expect(runner.state).toMatchObject({
      status: "dead",
      reason: expect.stringContaining("crashed again after 5 restarts in a row"),
    });
    expect(admission.liveCount).toBe(0);
    await expect(runner.prompt({ uuid: UUID_1, text: "hi" })).rejects.toMatchObject({ code: "conflict" });
  });

  it("treats a broken stdin pipe as a crash", async () => {
    const { runner, spawner } = setup();
    await runner.start();
    spawner.last.breakStdin();
    expect(spawner.signals.map((s) => s.signal)).toContain("SIGKILL");
    expect(runner.state.status).toBe("starting");
    await vi.advanceTimersByTimeAsync(100);
    expect(spawner.children).toHaveLength(2);
  });

  it("restarts with --session-id while the CLI has saved nothing yet", async () => {
    const { runner, spawner, transcript } = setup();
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "one" });
    spawner.last.print(frames.init(CLAUDE_ID));
    transcript.exists = false;
    spawner.last.exit(null, "SIGKILL");
    expect(runner.state).toMatchObject({ status: "starting" });
    await vi.advanceTimersByTimeAsync(100);
    expect(spawner.last.args).toEqual(expect.arrayContaining(["--session-id", CLAUDE_ID]));
  });

  it("resumes next time when the CLI says the session id is already taken by a saved conversation", async () => {
    const { runner, spawner } = setup();
    await runner.start();
    spawner.last.printStderr(`Error: Session ID ${CLAUDE_ID} is already in use.\n`);
    spawner.last.exit(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(spawner.children).toHaveLength(2);
    expect(spawner.last.args).toEqual(expect.arrayContaining(["--resume", CLAUDE_ID]));
  });

  it("marks the session dead, never fresh, when the resume finds no conversation", async () => {
    const { runner, spawner, events } = setup({ runner: { resume: true } });
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "continue" });
    const child = spawner.last;
    child.print({
      type: "result",
      subtype: "error_during_execution",
      is_error: true,
      session_id: CLAUDE_ID,
      errors: [`No conversation found with session ID: ${CLAUDE_ID}`],
    });
    child.printStderr(`No conversation found with session ID: ${CLAUDE_ID}\n`);
    child.exit(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(spawner.children).toHaveLength(1);
    expect(runner.state).toMatchObject({
      status: "dead",
      reason: expect.stringContaining(`no saved conversation ${CLAUDE_ID}`),
    });
    expect(events.at(-1)).toMatchObject({ type: "state", state: { status: "dead" } });
  });

  it("a prompt during the backoff restarts at once", async () => {
    const { runner, spawner } = setup({ config: { restartBaseMs: 5000 } });
    await runner.start();
    spawner.last.exit(1);
    const prompted = runner.prompt({ uuid: UUID_1, text: "are you there" });
    await vi.advanceTimersByTimeAsync(0);
    await prompted;
    expect(spawner.children).toHaveLength(2);
    expect(spawner.last.lines[0]).toMatchObject({ type: "user", uuid: UUID_1 });
  });
});

describe("watchdogs", () => {
  it("marks a silent turn stalled, lets interrupt through, and recovers on output", async () => {
    const { runner, spawner } = setup();
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "think" });
    spawner.last.print(frames.init(CLAUDE_ID));
    await vi.advanceTimersByTimeAsync(5000);
    spawner.last.print(frames.assistant(CLAUDE_ID, "partial"));
    await vi.advanceTimersByTimeAsync(9999);
    expect(runner.state.status).toBe("running");
    await vi.advanceTimersByTimeAsync(1);
    expect(runner.state).toMatchObject({ status: "stalled", silentSince: Date.now() - 10_000 });

    const interrupted = runner.interrupt();
    const child = spawner.last;
    child.answer(child.controlRequests("interrupt")[0]!, { still_queued: [] });
    await interrupted;
    expect(runner.state.status).toBe("running");
    child.print(frames.result(CLAUDE_ID, [UUID_1], { subtype: "error_during_execution", is_error: true }));
    expect(runner.state.status).toBe("idle");
  });

  it("does not call waiting for a person a stall", async () => {
    const { runner, spawner } = setup({ deps: { decidePermission: () => new Promise(() => undefined) } });
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "x" });
    spawner.last.print(frames.canUseTool("req-1"));
    await vi.advanceTimersByTimeAsync(50_000);
    expect(runner.state.status).toBe("awaiting-approval");
  });

  it("culls an idle child, then resumes the same conversation on the next prompt", async () => {
    const admission = createAdmission({ maxLive: 1, minFreeBytes: 0, freeMemory: () => 1e12 });
    const { runner, spawner } = setup({ deps: { admission } });
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "one" });
    playTurn(spawner.last, UUID_1);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(spawner.last.exited).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(spawner.last.stdin.writableEnded).toBe(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(runner.state).toMatchObject({ status: "stopped", exit: { expected: true } });
    expect(admission.liveCount).toBe(0);

    await runner.prompt({ uuid: UUID_2, text: "two" });
    expect(spawner.children).toHaveLength(2);
    expect(spawner.last.args).toEqual(expect.arrayContaining(["--resume", CLAUDE_ID]));
    expect(spawner.last.lines[0]).toMatchObject({ type: "user", uuid: UUID_2 });
    expect(admission.liveCount).toBe(1);
  });

  it("keeps an idle child warm while someone has the session open, and culls it once nobody has", async () => {
    let open = true;
    const asked: number[] = [];
    const { runner, spawner } = setup({
      runner: {
        watched: async () => {
          asked.push(Date.now());
          return open;
        },
      },
    });
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "one" });
    playTurn(spawner.last, UUID_1);
    const idleAt = Date.now();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(asked).toEqual([idleAt + 60_000]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(asked).toHaveLength(2);
    expect(spawner.last.exited).toBe(false);
    expect(runner.state.status).toBe("idle");
    open = false;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(asked).toHaveLength(3);
    expect(spawner.last.stdin.writableEnded).toBe(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(runner.state).toMatchObject({ status: "stopped", exit: { expected: true } });
  });

  it("decides by what happened while it asked: a prompt meanwhile keeps the child, a failed answer culls it", async () => {
    let answer: ((open: boolean) => void) | undefined;
    const first = setup({ runner: { watched: () => new Promise<boolean>((r) => (answer = r)) } });
    await first.runner.start();
    await first.runner.prompt({ uuid: UUID_1, text: "one" });
    playTurn(first.spawner.last, UUID_1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(answer).toBeDefined();
    await first.runner.prompt({ uuid: UUID_2, text: "two" });
    answer!(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(first.spawner.last.exited).toBe(false);
    expect(first.runner.state.status).toBe("running");

    const second = setup({ runner: { sessionId: "session-2", watched: () => Promise.reject(new Error("adapter timed out")) } });
    await second.runner.start();
    await second.runner.prompt({ uuid: UUID_1, text: "one" });
    playTurn(second.spawner.last, UUID_1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(second.spawner.last.stdin.writableEnded).toBe(true);
  });

  it("does not cull while an approval is pending", async () => {
    const { runner, spawner } = setup({ deps: { decidePermission: () => new Promise(() => undefined) } });
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "x" });
    spawner.last.print(frames.canUseTool("req-1"));
    spawner.last.print(frames.result(CLAUDE_ID, [UUID_1]));
    await vi.advanceTimersByTimeAsync(120_000);
    expect(spawner.last.exited).toBe(false);
    expect(runner.state.status).toBe("awaiting-approval");
  });
});

describe("admission", () => {
  it("refuses a start beyond the cap with a retryable unavailable error", async () => {
    const admission = createAdmission({ maxLive: 1, minFreeBytes: 0, freeMemory: () => 1e12 });
    const first = setup({ deps: { admission } });
    const second = setup({ runner: { sessionId: "session-2" }, deps: { admission } });
    await first.runner.start();
    const refusal = second.runner.start();
    await expect(refusal).rejects.toBeInstanceOf(AppError);
    await expect(refusal).rejects.toMatchObject({ code: "unavailable", message: expect.stringContaining("Try again") });
    expect(second.spawner.children).toHaveLength(0);
    await first.runner.stop();
    await second.runner.start();
    expect(second.spawner.children).toHaveLength(1);
  });

  it("asks to reclaim a slot when full: another idle child stopped makes room, else the refusal stands", async () => {
    const admission = createAdmission({ maxLive: 1, minFreeBytes: 0, freeMemory: () => 1e12 });
    const first = setup({ deps: { admission } });
    await first.runner.start();
    const asked: string[] = [];
    const second = setup({
      runner: { sessionId: "session-2" },
      deps: {
        admission,
        reclaimSlot: async (forSessionId) => {
          asked.push(forSessionId);
          await first.runner.stop();
          return true;
        },
      },
    });
    await second.runner.start();
    expect(asked).toEqual(["session-2"]);
    expect(first.runner.state.status).toBe("stopped");
    expect(second.spawner.children).toHaveLength(1);
    expect(admission.liveCount).toBe(1);

    // nothing to reclaim: refused as before, and nothing was prepared for the child (no credential issued)
    const issued: string[] = [];
    const third = setup({
      runner: { sessionId: "session-3" },
      deps: { admission, reclaimSlot: async () => false, credentials: { issue: (id) => (issued.push(id), { env: {}, revoke: () => undefined }) as never } },
    });
    await expect(third.runner.start()).rejects.toMatchObject({ code: "unavailable" });
    expect(third.spawner.children).toHaveLength(0);
    expect(issued).toEqual([]);
  });

  it("asks beforeSpawn first: its refusal takes no slot and prepares nothing", async () => {
    const admission = createAdmission({ maxLive: 1, minFreeBytes: 0, freeMemory: () => 1e12 });
    const issued: string[] = [];
    const refusal = new AppError("unavailable", "no sandbox on a shared instance", { reason: "isolation", retryable: false });
    const { runner, spawner } = setup({
      deps: {
        admission,
        beforeSpawn: async () => {
          throw refusal;
        },
        reclaimSlot: async () => {
          throw new Error("an isolation refusal reclaims nothing");
        },
        credentials: { issue: (id) => (issued.push(id), { env: {}, revoke: () => undefined }) as never },
      },
    });
    await expect(runner.start()).rejects.toBe(refusal);
    expect(spawner.children).toHaveLength(0);
    expect(admission.liveCount).toBe(0);
    expect(issued).toEqual([]);
  });

  it("passes the refusal's reason to reclaimSlot, and tries again when the next cap refuses", async () => {
    const owners: Record<string, { userId: string; workspaceId: string }> = {
      "session-1": { userId: "ann", workspaceId: "w1" },
      "session-2": { userId: "ann", workspaceId: "w2" },
      "session-3": { userId: "ann", workspaceId: "w2" },
    };
    const admission = createAdmission({ maxLive: 10, maxPerUser: 2, maxPerWorkspace: 1, minFreeBytes: 0, freeMemory: () => 1e12, ownerOf: (id) => owners[id] });
    const one = setup({ deps: { admission } });
    const two = setup({ runner: { sessionId: "session-2" }, deps: { admission } });
    await one.runner.start();
    await two.runner.start();
    const reasons: string[] = [];
    const three = setup({
      runner: { sessionId: "session-3" },
      deps: {
        admission,
        reclaimSlot: async (_id, reason) => {
          reasons.push(reason);
          // ann's cap: her session in w1 gives way; then w2's cap: her session there does
          await (reason === "user_limit" ? one : two).runner.stop();
          return true;
        },
      },
    });
    await three.runner.start();
    expect(reasons).toEqual(["user_limit", "workspace_limit"]);
    expect(three.spawner.children).toHaveLength(1);
  });

  it("refuses a start when memory is short", async () => {
    const admission = createAdmission({
      maxLive: 10,
      minFreeBytes: 400 * 1024 * 1024,
      freeMemory: () => 100 * 1024 * 1024,
    });
    const { runner, spawner } = setup({ deps: { admission } });
    await expect(runner.start()).rejects.toMatchObject({
      code: "unavailable",
      message: expect.stringMatching(/100 MB .* needs 400 MB/),
    });
    expect(spawner.children).toHaveLength(0);
  });
});

describe("dispose", () => {
  it("stops the child, clears every timer, and refuses further use", async () => {
    const { runner, spawner } = setup();
    await runner.start();
    await runner.prompt({ uuid: UUID_1, text: "x" });
    const disposed = runner.dispose();
    await vi.advanceTimersByTimeAsync(0);
    await disposed;
    expect(spawner.last.exited).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    await expect(runner.prompt({ uuid: UUID_2, text: "y" })).rejects.toMatchObject({ code: "conflict" });
  });
});
