// The session runner driving the real CLI against the scripted model: one process for many turns,
// and every kind of permission answer doing exactly what it says, checked on disk and in what the
// model was shown.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { callTool, say } from "@/server/model-server/scenario";
import { ControlRequestError } from "@/server/shared/claude-protocol/control-channel";
import { EncodeError, type PermissionDecision } from "@/server/shared/claude-protocol/encode";
import { startCliEnv, type CliEnv } from "@/test/cli-env";
import { createRealRunner, type RunnerKit } from "@/test/fake-cli/runner-kit";
import type { PermissionQuestion } from "./session-runner-contract";

let cliEnv: CliEnv | undefined;
let kit: RunnerKit | undefined;

afterEach(async () => {
  await kit?.close();
  await cliEnv?.close();
  kit = undefined;
  cliEnv = undefined;
});

type ToolInput = Extract<PermissionDecision, { behavior: "allow" }>["updatedInput"];

describe("turns", () => {
  it("runs three turns on one process", async () => {
    cliEnv = await startCliEnv();
    kit = createRealRunner(cliEnv);
    await kit.runner.start();
    for (const n of [1, 2, 3]) {
      const result = await kit.turn(`hello number ${n}`);
      expect(result).toMatchObject({ is_error: false, result: `You said: hello number ${n}` });
    }
    expect(kit.pids()).toHaveLength(1);
    expect(kit.messages().filter((m) => m.type === "result")).toHaveLength(3);
    expect(kit.runner.state).toMatchObject({
      status: "idle",
      claudeSessionId: kit.options.claudeSessionId,
      pendingPrompts: [],
    });
    // The third request carried the whole conversation.
    expect(cliEnv.server.requests.filter((r) => r.kind === "messages").at(-1)!.messageCount).toBeGreaterThanOrEqual(5);
  });
});

describe("permission answers", () => {
  it("runs the modified Bash command and the modified Edit content, not the model's", async () => {
    cliEnv = await startCliEnv({ files: { "notes.txt": "hello world\n" } });
    cliEnv.server.addScenario("modify", [
      callTool("Bash", { command: "echo original > bash-out.txt", description: "Write a file" }),
      callTool("Edit", { file_path: "notes.txt", old_string: "world", new_string: "model" }),
      say("Both done."),
    ]);
    const questions: PermissionQuestion[] = [];
    kit = createRealRunner(cliEnv, {
      decide: async (question) => {
        questions.push(question);
        const { request } = question;
        const updatedInput: ToolInput =
          request.tool_name === "Bash"
            ? { ...(request.input as ToolInput), command: "echo host-modified > bash-out.txt" }
            : { ...(request.input as ToolInput), new_string: "host" };
        return { behavior: "allow", updatedInput };
      },
    });
    const result = await kit.turn("[scenario:modify] go");
    expect(result).toMatchObject({ is_error: false, result: "Both done." });
    expect(questions.map((q) => q.request.tool_name)).toEqual(["Bash", "Edit"]);
    expect(questions[0]!.request.input).toMatchObject({ command: "echo original > bash-out.txt" });
    expect(await readFile(path.join(cliEnv.cwd, "bash-out.txt"), "utf8")).toBe("host-modified\n");
    expect(await readFile(path.join(cliEnv.cwd, "notes.txt"), "utf8")).toBe("hello host\n");
    expect(kit.runner.state.status).toBe("idle");
  });

  it("allows with updatedPermissions: the identical call no longer prompts, in this turn or the next", async () => {
    cliEnv = await startCliEnv();
    // Not read-only (echo would never prompt), and no redirection (a rule never covers those).
    const touch = { command: "touch rule-marker.txt", description: "Touch a file" };
    cliEnv.server.addScenario("twice", [
      callTool("Bash", touch),
      callTool("Bash", touch),
      (ctx) => say(`last: ${ctx.lastToolResults[0]?.text}`),
    ]);
    let asked = 0;
    kit = createRealRunner(cliEnv, {
      decide: async ({ request }) => {
        asked++;
        return {
          behavior: "allow",
          updatedInput: request.input as ToolInput,
          updatedPermissions: [
            {
              type: "addRules",
              rules: [{ toolName: "Bash", ruleContent: "touch rule-marker.txt" }],
              behavior: "allow",
              destination: "session",
            },
          ],
        };
      },
    });
    const first = await kit.turn("[scenario:twice] run it twice");
    expect(first).toMatchObject({ is_error: false, result: "last: (Bash completed with no output)" });
    expect(asked).toBe(1);
    expect(await readFile(path.join(cliEnv.cwd, "rule-marker.txt"), "utf8")).toBe("");
    const second = await kit.turn("[scenario:twice] and again");
    expect(second).toMatchObject({ is_error: false, result: "last: (Bash completed with no output)" });
    expect(asked).toBe(1);
  });

  it("denies with a message the model reads in its tool_result", async () => {
    cliEnv = await startCliEnv();
    cliEnv.server.addScenario("risky", [
      callTool("Bash", { command: "rm -rf build", description: "Clean" }),
      (ctx) => say(`told: ${ctx.lastToolResults[0]?.text}`),
    ]);
    const message = "Not here: run `make clean` instead.";
    kit = createRealRunner(cliEnv, { decide: async () => ({ behavior: "deny", message }) });
    const result = await kit.turn("[scenario:risky] clean up");
    expect(result).toMatchObject({ is_error: false, result: `told: ${message}` });
    const shown = cliEnv.server.requests.find((r) => r.scenario === "risky" && r.stepIndex === 1);
    expect(shown!.toolResults).toEqual([expect.objectContaining({ isError: true, text: message })]);
    expect(result.permission_denials).toEqual([expect.objectContaining({ tool_name: "Bash" })]);
  });
});

describe("permission modes", () => {
  it("switches to acceptEdits: the next Edit runs without a prompt", async () => {
    cliEnv = await startCliEnv({ files: { "notes.txt": "hello world\n" } });
    cliEnv.server.addScenario("edit", [
      callTool("Edit", { file_path: "notes.txt", old_string: "world", new_string: "accepted" }),
      say("Edited."),
    ]);
    let asked = 0;
    kit = createRealRunner(cliEnv, {
      decide: async () => {
        asked++;
        return { behavior: "deny", message: "should not be asked" };
      },
    });
    await kit.runner.start();
    await expect(kit.runner.setPermissionMode("acceptEdits")).resolves.toBe("acceptEdits");
    const result = await kit.turn("[scenario:edit] edit it");
    expect(result).toMatchObject({ is_error: false, result: "Edited." });
    expect(asked).toBe(0);
    expect(await readFile(path.join(cliEnv.cwd, "notes.txt"), "utf8")).toBe("hello accepted\n");
    expect(kit.runner.state.permissionMode).toBe("acceptEdits");
  });

  it("refuses an invalid or unlaunched mode with a typed error, and the process lives on", async () => {
    cliEnv = await startCliEnv();
    kit = createRealRunner(cliEnv);
    await kit.runner.start();
    await expect(kit.runner.setPermissionMode("yolo" as never)).rejects.toBeInstanceOf(EncodeError);
    const refusal = kit.runner.setPermissionMode("bypassPermissions");
    await expect(refusal).rejects.toBeInstanceOf(ControlRequestError);
    await expect(refusal).rejects.toMatchObject({ errorCode: "bypass_not_launched" });
    const result = await kit.turn("still alive?");
    expect(result).toMatchObject({ is_error: false, result: "You said: still alive?" });
    expect(kit.pids()).toHaveLength(1);
    expect(kit.runner.state.permissionMode).toBe("default");
  });
});
