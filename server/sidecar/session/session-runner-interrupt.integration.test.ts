// Interrupts through the runner against the real CLI: while the model streams, while a tool runs,
// and while a permission question waits for a person. Each ends the turn and leaves the process usable.
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { callTool, say } from "@/server/model-server/scenario";
import type { StreamEventMessage } from "@/server/shared/claude-protocol/messages";
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

describe("interrupt", () => {
  it("stops a streaming answer", async () => {
    cliEnv = await startCliEnv();
    const chunks = Array.from({ length: 40 }, (_, i) => `word${i} `);
    cliEnv.server.addScenario("slow", [say(chunks.join(""), { chunks, chunkDelayMs: 100 })]);
    kit = createRealRunner(cliEnv);
    await kit.runner.start();
    const from = kit.events.length;
    await kit.runner.prompt({ uuid: crypto.randomUUID(), text: "[scenario:slow] talk slowly" });
    await kit.waitForMessage<StreamEventMessage>(
      (m) => m.type === "stream_event" && m.event.type === "content_block_delta",
      { from },
    );
    const interruptedAt = Date.now();
    await kit.runner.interrupt();
    const result = await kit.waitForMessage((m) => m.type === "result", { from });
    expect(Date.now() - interruptedAt).toBeLessThan(2000);
    expect(result).toMatchObject({ subtype: "error_during_execution", is_error: true });
    expect(kit.runner.state.status).toBe("idle");
    await expect(kit.turn("[scenario:none] after the interrupt")).resolves.toMatchObject({ is_error: false });
    expect(kit.pids()).toHaveLength(1);
  });

  it("stops a running tool: the command's later effect never happens", async () => {
    cliEnv = await startCliEnv();
    cliEnv.server.addScenario("sleepy", [
      callTool("Bash", { command: "sleep 3 && touch late.txt", description: "Sleep, then write" }),
      say("Slept."),
    ]);
    let allowedAt = 0;
    kit = createRealRunner(cliEnv, {
      decide: async ({ request }) => {
        allowedAt = Date.now();
        return { behavior: "allow", updatedInput: request.input as Record<string, never> };
      },
    });
    await kit.runner.start();
    const from = kit.events.length;
    await kit.runner.prompt({ uuid: crypto.randomUUID(), text: "[scenario:sleepy] wait a bit" });
    await kit.waitForState((state) => allowedAt > 0 && state.status === "running");
    // Give the shell time to start the command.
    await new Promise((resolve) => setTimeout(resolve, 800));
    await kit.runner.interrupt();
    const result = await kit.waitForMessage((m) => m.type === "result", { from, timeoutMs: 4000 });
    // Ended before the command could have finished on its own…
    expect(Date.now() - allowedAt).toBeLessThan(3000);
    expect(result).toMatchObject({ subtype: "error_during_execution", is_error: true });
    // …and the command was killed: past the time it would have written, nothing was written.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, allowedAt + 3500 - Date.now())));
    expect(existsSync(path.join(cliEnv.cwd, "late.txt"))).toBe(false);
    await expect(kit.turn("[scenario:none] still there?")).resolves.toMatchObject({ is_error: false });
  });

  it("releases a pending permission question: the decider's signal aborts and the turn ends", async () => {
    cliEnv = await startCliEnv();
    cliEnv.server.addScenario("ask", [
      callTool("Bash", { command: "touch asked.txt", description: "Touch" }),
      say("Touched."),
    ]);
    const signals: AbortSignal[] = [];
    kit = createRealRunner(cliEnv, {
      decide: ({ signal }) => {
        signals.push(signal);
        return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
      },
    });
    await kit.runner.start();
    const from = kit.events.length;
    await kit.runner.prompt({ uuid: crypto.randomUUID(), text: "[scenario:ask] touch it" });
    await kit.waitForState((state) => state.status === "awaiting-approval");
    await kit.runner.interrupt();
    const result = await kit.waitForMessage((m) => m.type === "result", { from });
    expect(result).toMatchObject({ is_error: true });
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
    expect(kit.messages().some((m) => m.type === "control_cancel_request")).toBe(true);
    expect(kit.runner.state).toMatchObject({ status: "idle", pendingApprovals: [] });
    expect(existsSync(path.join(cliEnv.cwd, "asked.txt"))).toBe(false);
  });
});
