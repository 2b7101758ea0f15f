// The scripted model against the real CLI: tool calls go through the permission protocol and run,
// relative paths are resolved to the CLI's cwd, usage figures turn into exact costs, and the
// CLI's retry behaviour meets the error steps as the protocol reference describes.
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { allowTool, runTurn, spawnTestCli, startCliEnv, userMessage, type CliEnv } from "@/test/cli-env";
import { claudeVersion } from "@/server/sidecar/process/claude-binary";
import { callTool, fail, say } from "./scenario";

let cliEnv: CliEnv | undefined;

afterEach(async () => {
  await cliEnv?.close();
  cliEnv = undefined;
});

describe("the real CLI against the scripted model", () => {
  it("asks permission for a Bash call, runs it once allowed, and reports the result", async () => {
    cliEnv = await startCliEnv();
    cliEnv.server.addScenario("bash", [
      callTool(
        "Bash",
        { command: "echo hi > out.txt", description: "Write hi to out.txt" },
        { text: "Writing the file." },
      ),
      (ctx) => say(`The command said: ${ctx.lastToolResults[0]?.text}`),
    ]);
    const cli = spawnTestCli(cliEnv);
    cli.send(userMessage("[scenario:bash] write the file"));
    const request = await cli.waitFor((m) => m.type === "control_request");
    const body = request.request as { subtype: string; tool_name: string; input: Record<string, unknown> };
    expect(body).toMatchObject({ subtype: "can_use_tool", tool_name: "Bash", input: { command: "echo hi > out.txt" } });
    cli.send(allowTool(String(request.request_id), body.input));
    const result = await cli.waitFor((m) => m.type === "result");
    expect(result).toMatchObject({
      subtype: "success",
      is_error: false,
      num_turns: 2,
      result: "The command said: (Bash completed with no output)",
    });
    expect(await readFile(path.join(cliEnv.cwd, "out.txt"), "utf8")).toBe("hi\n");
    const [first, second] = cliEnv.server.requests.filter((record) => record.kind === "messages");
    expect(first).toMatchObject({ scenario: "bash", stepIndex: 0, stream: true, cwd: cliEnv.cwd });
    expect(first!.toolNames).toEqual(expect.arrayContaining(["Bash", "Edit", "Read", "Write"]));
    expect(second).toMatchObject({
      stepIndex: 1,
      toolResults: [{ isError: false, text: "(Bash completed with no output)" }],
    });
    expect(await cli.stop()).toBe(0);
  });

  it("resolves relative paths against the CLI's cwd and shows the model what the tool returned", async () => {
    cliEnv = await startCliEnv({ files: { "docs/notes.md": "alpha\nbeta\n" } });
    cliEnv.server.addScenario("read", [
      callTool("Read", { file_path: "docs/notes.md" }),
      (ctx) => say(`saw ${ctx.lastToolResults[0]?.text.includes("beta") ? "beta" : "nothing"}`),
    ]);
    const cli = spawnTestCli(cliEnv);
    const { result, permissionRequests } = await runTurn(cli, "[scenario:read]");
    // Read inside the workspace needs no permission.
    expect(permissionRequests).toEqual([]);
    expect(result).toMatchObject({ is_error: false, result: "saw beta" });
    const toolUse = cli.messages.find((m) => m.type === "assistant" && JSON.stringify(m).includes('"tool_use"'));
    expect(JSON.stringify(toolUse)).toContain(`"file_path":"${path.join(cliEnv.cwd, "docs/notes.md")}"`);
  });

  it("turns fixed usage figures into exact costs, across a mid-stream error and a 429", async () => {
    cliEnv = await startCliEnv();
    const usage = {
      input_tokens: 1000,
      output_tokens: 2000,
      cache_read_input_tokens: 3000,
      cache_creation_input_tokens: 4000,
    };
    cliEnv.server.addScenario("mid", [fail("midstream"), say("after the break", { usage })]);
    cliEnv.server.addScenario("limited", [
      fail("rate_limit", { retryAfterSeconds: 1 }),
      say("after the wait", { usage }),
    ]);
    const cli = spawnTestCli(cliEnv);

    const mid = await runTurn(cli, "[scenario:mid]");
    // Default model claude-opus-5-5: $4 / $20 / $0.20 / $5 per million input / output / cache read / cache write.
    const turnCost = (1000 * 4 + 2000 * 20 + 3000 * 0.2 + 4000 * 5) / 1e6;
    expect(mid.result).toMatchObject({ is_error: false, result: "after the break", usage: { ...usage } });
    expect(mid.result.total_cost_usd).toBeCloseTo(turnCost, 12);
    expect(cliEnv.server.requests.map((record) => [record.stream, record.response.kind])).toEqual([
      [true, "midstream-error"],
      [false, "reply"],
    ]);

    const limited = await runTurn(cli, "[scenario:limited]");
    expect(limited.result).toMatchObject({ is_error: false, result: "after the wait" });
    expect(limited.result.total_cost_usd).toBeCloseTo(2 * turnCost, 12);
    const retry = cli.messages.find((m) => m.type === "system" && m.subtype === "api_retry");
    expect(retry).toMatchObject({ error_status: 429, error: "rate_limit" });
  });

  it("ends the turn with an error result when the API never recovers; the next prompt stands alone", async () => {
    cliEnv = await startCliEnv({ extraEnv: { CLAUDE_CODE_MAX_RETRIES: "0" } });
    cliEnv.server.addScenario("down", [fail("server", { times: Infinity })]);
    const cli = spawnTestCli(cliEnv);
    const down = await runTurn(cli, "[scenario:down]");
    expect(down.result).toMatchObject({
      subtype: "success",
      is_error: true,
      terminal_reason: "api_error",
      api_error_status: 500,
    });
    // The CLI merges the unanswered prompt into the next message; only the newest prompt picks the scenario.
    const next = await runTurn(cli, "plain hello");
    expect(next.result).toMatchObject({ is_error: false, result: "You said: plain hello" });
    expect(cliEnv.server.requests.at(-1)!.shape).toMatch(/^u\[text,text,text\]/);
  });

  it("reports the pinned CLI version", async () => {
    cliEnv = await startCliEnv();
    expect(await claudeVersion(cliEnv.cliPath)).toBe("2.1.332");
  });
});

describe("main.ts", () => {
  it("prints its address, serves, and exits cleanly on SIGTERM", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "server/model-server/main.ts", "--port", "0", "--quiet"],
      {
        cwd: path.resolve(import.meta.dirname, "../.."),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const lines = createInterface({ input: child.stdout });
        lines.on("line", (line) => {
          const match = /^model-server listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
          if (match?.[1]) resolve(match[1]);
        });
        child.once("exit", (code) => reject(new Error(`main.ts exited early (${code})`)));
      });
      const health = (await (await fetch(`${url}/health`)).json()) as { ok: boolean; scenarios: string[] };
      expect(health).toMatchObject({ ok: true });
      expect(health.scenarios).toContain("demo-tour");
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
