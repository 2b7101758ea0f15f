// The offline demo end to end: the real CLI, the demo scenarios, a host that allows everything.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runTurn, spawnTestCli, startCliEnv, type CliEnv } from "@/test/cli-env";
import { demoTourCommand, demoTourFile, demoWriteFile } from "./demo-scenarios";

let cliEnv: CliEnv | undefined;

afterEach(async () => {
  await cliEnv?.close();
  cliEnv = undefined;
});

describe("demo scenarios with the real CLI", () => {
  it("tours an empty workspace: creates the file, edits it with a diff, runs a command, summarises", async () => {
    cliEnv = await startCliEnv({ demo: true });
    const cli = spawnTestCli(cliEnv);
    const file = path.join(cliEnv.cwd, demoTourFile);

    const first = await runTurn(cli, "Show me what you can do");
    expect(first.permissionRequests.map((request) => request.toolName)).toEqual(["Write", "Edit", "Bash"]);
    expect(first.permissionRequests[1]!.input).toMatchObject({
      file_path: file,
      old_string: "Status: draft",
      new_string: "Status: reviewed",
    });
    expect(first.permissionRequests[2]!.input).toMatchObject({ command: demoTourCommand });
    expect(first.result).toMatchObject({ subtype: "success", is_error: false });
    expect(String(first.result.result)).toContain(`Created \`${demoTourFile}\``);
    expect(await readFile(file, "utf8")).toContain("Status: reviewed");

    // A second tour finds the file and edits what the Read showed.
    const second = await runTurn(cli, "once more");
    expect(second.permissionRequests.map((request) => request.toolName)).toEqual(["Edit", "Bash"]);
    expect(await readFile(file, "utf8")).toContain("Status: approved");
  });

  it("edits a file it did not write", async () => {
    cliEnv = await startCliEnv({ demo: true, files: { [demoTourFile]: "# Someone else's notes\n\nkeep this line\n" } });
    const cli = spawnTestCli(cliEnv);
    const { permissionRequests, result } = await runTurn(cli, "tour");
    expect(permissionRequests.map((request) => request.toolName)).toEqual(["Edit", "Bash"]);
    expect(result).toMatchObject({ is_error: false });
    expect(await readFile(path.join(cliEnv.cwd, demoTourFile), "utf8")).toBe(
      "# Someone else's notes\n\nkeep this line\n\nStatus: reviewed\n",
    );
  });

  it("runs the keyword scenarios in one session", async () => {
    cliEnv = await startCliEnv({ demo: true });
    const cli = spawnTestCli(cliEnv);

    const chat = await runTurn(cli, "hello");
    expect(chat.permissionRequests).toEqual([]);
    expect(String(chat.result.result)).toContain("offline demo model");

    const write = await runTurn(cli, "write a file");
    expect(write.permissionRequests.map((request) => request.toolName)).toEqual(["Write"]);
    expect(await readFile(path.join(cliEnv.cwd, demoWriteFile), "utf8")).toContain("Hello from Conduit");

    const question = await runTurn(cli, "ask me a question", (name, input) =>
      name === "AskUserQuestion"
        ? { ...input, answers: { "Which colour should the demo banner use?": "Green" } }
        : input,
    );
    expect(question.permissionRequests.map((request) => request.toolName)).toEqual(["AskUserQuestion"]);
    expect(String(question.result.result)).toContain('"Green"');

    const plan = await runTurn(cli, "make a plan");
    expect(plan.permissionRequests.map((request) => request.toolName)).toEqual(["ExitPlanMode"]);
    expect(String(plan.result.result)).toContain("approved");
    const modes = cli.messages
      .filter((m) => m.type === "system" && m.subtype === "status")
      .map((m) => m.permissionMode);
    expect(modes).toEqual(["plan", "default"]);

    const error = await runTurn(cli, "show me an error");
    expect(error.result).toMatchObject({ is_error: false });
    expect(cli.messages.some((m) => m.type === "system" && m.subtype === "api_retry" && m.error_status === 529)).toBe(
      true,
    );
  });
});
