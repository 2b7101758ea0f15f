import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createFakeSpawner } from "@/test/fake-cli/fake-child";
import { CliPipeError, spawnCliProcess, type CliExit, type CliProcessOptions } from "./cli-process";

const config = { stdinGraceMs: 100, termGraceMs: 200, killWaitMs: 300, exitDrainMs: 50, maxStderrLineBytes: 20 };

function start(spawner: ReturnType<typeof createFakeSpawner>, overrides: Partial<CliProcessOptions> = {}) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const exits: CliExit[] = [];
  const started = spawnCliProcess({
    cliPath: "/bin/claude",
    args: ["--verbose"],
    cwd: "/ws",
    env: { PATH: "/bin" },
    config,
    spawn: spawner.spawn,
    killGroup: spawner.killGroup,
    onStdout: (chunk) => stdout.push(Buffer.from(chunk).toString()),
    onStderrLine: (line) => stderr.push(line),
    onExit: (exit) => exits.push(exit),
    ...overrides,
  });
  return { started, stdout, stderr, exits };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  expect(vi.getTimerCount()).toBe(0);
  vi.useRealTimers();
});

describe("CliProcess", () => {
  it("reports the exit once, after the pipes closed, and sweeps the group", async () => {
    const spawner = createFakeSpawner();
    const { started, stdout, exits } = start(spawner);
    const child = await started;
    spawner.last.print({ type: "keep_alive" });
    spawner.last.exit(1);
    expect(stdout).toEqual(['{"type":"keep_alive"}\n']);
    expect(exits).toEqual([{ pid: child.pid, code: 1, signal: null, expected: false }]);
    expect(spawner.signals).toEqual([{ pid: child.pid, signal: "SIGKILL", at: expect.any(Number) }]);
    expect(child.running).toBe(false);
    expect(() => child.write("{}\n")).toThrow(CliPipeError);
  });

  it("does not wait forever for a stdout a grandchild keeps open", async () => {
    const spawner = createFakeSpawner();
    const { started, exits } = start(spawner);
    await started;
    const fake = spawner.last;
    fake.exitStatus = { code: 0, signal: null };
    fake.emit("exit", 0, null); // the pipes stay open
    expect(exits).toEqual([]);
    await vi.advanceTimersByTimeAsync(50);
    expect(exits).toHaveLength(1);
  });

  it("splits stderr into lines and cuts runaway lines", async () => {
    const spawner = createFakeSpawner();
    const { started, stderr } = start(spawner);
    await started;
    spawner.last.printStderr("first line\r\nsecond ");
    spawner.last.printStderr("half\n" + "x".repeat(50) + "\n");
    spawner.last.printStderr("unterminated");
    spawner.last.exit(0);
    expect(stderr).toEqual(["first line", "second half", `${"x".repeat(20)}… (50 chars)`, "unterminated"]);
  });

  it("rejects when the executable cannot start", async () => {
    const spawner = createFakeSpawner({ spawnError: new Error("spawn /bin/claude ENOENT") });
    await expect(start(spawner).started).rejects.toMatchObject({
      name: "CliSpawnError",
      message: expect.stringContaining("ENOENT"),
    });
  });

  it("turns a broken stdin into a crash with a cause", async () => {
    const spawner = createFakeSpawner();
    const { started, exits } = start(spawner);
    await started;
    spawner.last.breakStdin();
    expect(exits).toEqual([
      expect.objectContaining({ signal: "SIGKILL", expected: false, cause: "stdin pipe error: write EPIPE" }),
    ]);
  });

  it("stop() escalates and is idempotent", async () => {
    const spawner = createFakeSpawner({ onStdinEnd: "ignore", onSigterm: "ignore" });
    const { started } = start(spawner);
    const child = await started;
    const first = child.stop();
    const second = child.stop();
    expect(second).toBe(first);
    expect(() => child.write("{}\n")).toThrow(CliPipeError);
    await vi.advanceTimersByTimeAsync(300);
    await expect(first).resolves.toMatchObject({ signal: "SIGKILL", expected: true });
    expect(spawner.signals.map((s) => s.signal)).toEqual(["SIGTERM", "SIGKILL", "SIGKILL"]);
  });
});
