// Supervision of the real CLI: a SIGKILL mid-turn is detected at once and the same conversation
// resumed; an idle child is culled and resumed on the next prompt; a conversation the CLI cannot
// find is never passed off as the old one.
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { say } from "@/server/model-server/scenario";
import type { SystemInitMessage } from "@/server/shared/claude-protocol/messages";
import { startCliEnv, type CliEnv } from "@/test/cli-env";
import { createRealRunner, type RunnerKit } from "@/test/fake-cli/runner-kit";

let cliEnv: CliEnv | undefined;
let kit: RunnerKit | undefined;

afterEach(async () => {
  await kit?.close();
  await cliEnv?.close();
  kit = undefined;
  cliEnv = undefined;
});

function spawned(k: RunnerKit) {
  return k.events.filter((e) => e.type === "process" && e.phase === "spawned");
}

describe("crash", () => {
  it("detects a SIGKILL mid-turn within 1 s and resumes the same conversation", async () => {
    cliEnv = await startCliEnv();
    const chunks = Array.from({ length: 40 }, (_, i) => `w${i} `);
    cliEnv.server.addScenario("slow", [say(chunks.join(""), { chunks, chunkDelayMs: 100 })]);
    kit = createRealRunner(cliEnv, { config: { restartBaseMs: 100 } });
    await kit.turn("remember the word pineapple");
    const claudeSessionId = kit.runner.state.claudeSessionId;
    expect(claudeSessionId).toBe(kit.options.claudeSessionId);

    const from = kit.events.length;
    await kit.runner.prompt({ uuid: crypto.randomUUID(), text: "[scenario:slow] talk" });
    await kit.waitForMessage((m) => m.type === "stream_event", { from });
    const [pid] = kit.pids();
    const killedAt = Date.now();
    process.kill(pid!, "SIGKILL");
    await kit.waitFor((e) => e.type === "process" && e.phase === "exited", { from });
    expect(Date.now() - killedAt).toBeLessThan(1000);
    expect(kit.events.slice(from).find((e) => e.type === "process" && e.phase === "exited")).toMatchObject({
      signal: "SIGKILL",
      expected: false,
    });
    expect(kit.events.slice(from).some((e) => e.type === "state" && e.state.status === "crashed")).toBe(true);

    await kit.waitForState((state) => state.status === "idle" && state.processRunning, 10_000);
    expect(spawned(kit).at(-1)).toMatchObject({ resumed: true });
    expect(kit.pids()).toHaveLength(2);
    expect(kit.runner.state.claudeSessionId).toBe(claudeSessionId);

    const after = kit.events.length;
    const result = await kit.turn("what was the word?");
    expect(result).toMatchObject({ is_error: false, session_id: claudeSessionId });
    const init = kit
      .messages()
      .slice(0)
      .filter((m): m is SystemInitMessage => m.type === "system" && m.subtype === "init")
      .at(-1);
    expect(init!.session_id).toBe(claudeSessionId);
    expect(kit.events.length).toBeGreaterThan(after);
    // The resumed process sent the earlier conversation to the model.
    const last = cliEnv.server.requests.filter((r) => r.kind === "messages").at(-1)!;
    expect(JSON.stringify(last.body)).toContain("pineapple");
  });
});

describe("idle cull", () => {
  it("stops an idle child and resumes it, same conversation, on the next prompt", async () => {
    cliEnv = await startCliEnv();
    kit = createRealRunner(cliEnv, { config: { idleCullMs: 700 } });
    await kit.turn("remember the word mango");
    const claudeSessionId = kit.runner.state.claudeSessionId;
    const stopped = await kit.waitForState((state) => state.status === "stopped", 5000);
    expect(stopped).toMatchObject({ status: "stopped", exit: { expected: true }, processRunning: false });

    const result = await kit.turn("what was the word?");
    expect(result).toMatchObject({ is_error: false, session_id: claudeSessionId });
    expect(spawned(kit)).toEqual([
      expect.objectContaining({ resumed: false }),
      expect.objectContaining({ resumed: true }),
    ]);
    expect(kit.runner.state.claudeSessionId).toBe(claudeSessionId);
    const last = cliEnv.server.requests.filter((r) => r.kind === "messages").at(-1)!;
    expect(JSON.stringify(last.body)).toContain("mango");
  });
});

describe("a conversation that cannot be resumed", () => {
  it("makes the session dead with the reason, and never starts a fresh conversation in its place", async () => {
    cliEnv = await startCliEnv();
    kit = createRealRunner(cliEnv, { config: { idleCullMs: 500, restartBaseMs: 50 } });
    await kit.turn("first turn");
    await kit.waitForState((state) => state.status === "stopped", 5000);
    // The transcript vanishes while the child is culled (a wiped config dir, a restored backup).
    await rm(path.join(cliEnv.configDir, "projects"), { recursive: true, force: true });
    await kit.runner.prompt({ uuid: crypto.randomUUID(), text: "second turn" });
    const dead = await kit.waitForState((state) => state.status === "dead", 10_000);
    expect(dead).toMatchObject({
      status: "dead",
      reason: expect.stringContaining(`no saved conversation ${kit.options.claudeSessionId}`),
    });
    expect(kit.events.some((e) => e.type === "stderr" && e.text.includes("No conversation found"))).toBe(true);
    expect(kit.pids()).toHaveLength(2);
    await expect(kit.runner.prompt({ uuid: crypto.randomUUID(), text: "third" })).rejects.toMatchObject({
      code: "conflict",
    });
    expect(cliEnv.server.requests.filter((r) => r.kind === "messages" && r.prompt.includes("second turn"))).toEqual([]);
  });
});
