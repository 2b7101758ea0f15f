// The supervisor against real processes that misbehave (test/fake-cli/fake-cli.mjs): a CLI that
// hangs, prints garbage, ignores SIGTERM, leaves a grandchild behind, or crashes at once.
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { ControlTimeoutError } from "@/server/shared/claude-protocol/control-channel";
import { createFakeRunner, type RunnerKit } from "@/test/fake-cli/runner-kit";
import { killProcessGroup, type KillGroup } from "./cli-process";

let kit: RunnerKit | undefined;

afterEach(async () => {
  await kit?.close();
  kit = undefined;
});

/** Delegates to the real group kill and records what was sent, and when. */
function recordingKillGroup(): { killGroup: KillGroup; sent: Array<{ signal: string; at: number }> } {
  const sent: Array<{ signal: string; at: number }> = [];
  return {
    sent,
    killGroup(pgid, signal) {
      sent.push({ signal, at: Date.now() });
      killProcessGroup(pgid, signal);
    },
  };
}

/** Running and not a zombie (a reparented grandchild may wait for a reaper that never comes). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

describe("a hanging CLI", () => {
  it("is marked stalled, an interrupt times out, and stop escalates to SIGTERM", async () => {
    const kill = recordingKillGroup();
    kit = await createFakeRunner("hang", {
      config: { stallMs: 300, controlTimeoutMs: 400, stdinGraceMs: 300, termGraceMs: 3000 },
      deps: { killGroup: kill.killGroup },
    });
    await kit.runner.prompt({ uuid: crypto.randomUUID(), text: "anyone there?" });
    const stalled = await kit.waitForState((state) => state.status === "stalled", 3000);
    expect(stalled).toMatchObject({ status: "stalled" });
    await expect(kit.runner.interrupt()).rejects.toBeInstanceOf(ControlTimeoutError);

    const started = Date.now();
    await kit.runner.stop();
    const elapsed = Date.now() - started;
    expect(kill.sent.map((s) => s.signal)).toEqual(["SIGTERM", "SIGKILL"]);
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(2500);
    expect(kit.events.find((e) => e.type === "process" && e.phase === "exited")).toMatchObject({
      signal: "SIGTERM",
      expected: true,
    });
    expect(kit.runner.state.status).toBe("stopped");
  });
});

describe("a CLI printing garbage", () => {
  it("reports the bad lines and the oversized one, and the turn still completes", async () => {
    kit = await createFakeRunner("garbage", {
      config: { maxLineBytes: 1024 * 1024 },
      extraArgs: ["--fake-huge-bytes", String(3 * 1024 * 1024)],
    });
    const result = await kit.turn("still fine?");
    expect(result).toMatchObject({ is_error: false, result: "You said: still fine?" });
    const bad = kit.events.filter((e) => e.type === "bad-line");
    expect(bad).toEqual([
      { type: "bad-line", raw: "this line is not JSON at all", error: expect.stringContaining("Invalid JSON") },
      { type: "bad-line", raw: "", error: expect.stringContaining("Line longer than 1048576 bytes") },
    ]);
    expect(kit.runner.state.status).toBe("idle");
    expect(kit.pids()).toHaveLength(1);
  });
});

describe("a CLI ignoring SIGTERM", () => {
  it("is ended by SIGKILL after both graces", async () => {
    const kill = recordingKillGroup();
    kit = await createFakeRunner("ignore-sigterm", {
      config: { stdinGraceMs: 200, termGraceMs: 400 },
      deps: { killGroup: kill.killGroup },
    });
    await kit.turn("hello");
    const started = Date.now();
    await kit.runner.stop();
    expect(kill.sent.map((s) => s.signal)).toEqual(["SIGTERM", "SIGKILL", "SIGKILL"]);
    expect(kill.sent[0]!.at - started).toBeGreaterThanOrEqual(190);
    expect(kill.sent[1]!.at - kill.sent[0]!.at).toBeGreaterThanOrEqual(390);
    expect(kit.events.find((e) => e.type === "process" && e.phase === "exited")).toMatchObject({
      signal: "SIGKILL",
      expected: true,
    });
    expect(isRunning(kit.pids()[0]!)).toBe(false);
  });
});

describe("a CLI leaving a grandchild behind", () => {
  it("takes the grandchild down with its process group", async () => {
    kit = await createFakeRunner("grandchild", { config: { stdinGraceMs: 1000 } });
    await kit.runner.start();
    const line = await kit.waitFor((e) => e.type === "stderr" && e.text.startsWith("fake-cli grandchild "));
    const grandchild = Number((line as { text: string }).text.split(" ").at(-1));
    expect(isRunning(grandchild)).toBe(true);
    await kit.turn("hi");
    await kit.runner.stop();
    // The CLI itself exited on stdin end; the grandchild would have lived on without the sweep.
    expect(kit.events.find((e) => e.type === "process" && e.phase === "exited")).toMatchObject({
      code: 0,
      expected: true,
    });
    await expect.poll(() => isRunning(grandchild), { timeout: 1000 }).toBe(false);
  });
});

describe("a CLI that keeps crashing", () => {
  it("is restarted five times with backoff, then the session is dead", async () => {
    kit = await createFakeRunner("crash-after", { config: { restartBaseMs: 20, restartMaxMs: 100 } });
    await kit.runner.start();
    const dead = await kit.waitForState((state) => state.status === "dead", 10_000);
    expect(dead).toMatchObject({ status: "dead", reason: "the CLI crashed again after 5 restarts in a row (the restart budget), so it is not restarted any more" });
    expect(kit.pids()).toHaveLength(6);
    const exits = kit.events.filter((e) => e.type === "process" && e.phase === "exited");
    expect(exits).toHaveLength(6);
    expect(exits.every((e) => e.type === "process" && e.phase === "exited" && e.code === 1 && !e.expected)).toBe(true);
    // Nothing was ever saved, so no restart pretended to resume a conversation.
    const argvLines = kit.events.flatMap((e) =>
      e.type === "stderr" && e.text.startsWith("fake-cli argv:") ? [e.text] : [],
    );
    expect(argvLines.every((text) => text.includes("--session-id") && !text.includes("--resume"))).toBe(true);
  });
});

describe("the can_use_tool emitter", () => {
  it("routes each permission question to the decider and completes the turn with its answer", async () => {
    kit = await createFakeRunner("permission", {
      decide: async ({ request }) => ({
        behavior: "allow",
        updatedInput: { ...request.input, command: "echo modified" },
      }),
    });
    const first = await kit.turn("echo original");
    expect(first).toMatchObject({ result: "ran: echo modified" });
    const second = await kit.turn("echo again");
    expect(second).toMatchObject({ result: "ran: echo modified" });
    expect(kit.pids()).toHaveLength(1);
  });
});
