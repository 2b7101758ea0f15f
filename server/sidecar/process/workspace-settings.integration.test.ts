// What the real CLI 2.1.332 does with a workspace's own settings, and that Conduit's spawn flags
// keep them out until an owner trusts them. Settings files are written where a session or a
// commit could write them: `.claude/settings.json`, `.claude/settings.local.json`, and the CLI
// config directory's `.claude.json` (the config dir is writable from inside the sandbox).
// The settings file's env and helper commands, and the skills, commands and agents under
// `.claude/`: `workspace-settings-config.integration.test.ts`.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { callTool, say } from "@/server/model-server/scenario";
import { runTurn, spawnTestCli, startCliEnv, type CliEnv } from "@/test/cli-env";
import { allowAsProposed, createRealRunner, type RunnerKit } from "@/test/fake-cli/runner-kit";
import type { PermissionQuestion } from "@/server/sidecar/session/session-runner-contract";

const memoryMarker = `MEMORY-${Date.now()}`;
const bashScenario = { name: "settings-bash", triggers: ["settingsbash"], steps: [callTool("Bash", { command: "echo ran > out.txt", description: "Write" }), say("done")] };

let cliEnv: CliEnv | undefined;
let kit: RunnerKit | undefined;
afterEach(async () => {
  await kit?.close();
  await cliEnv?.close();
  kit = cliEnv = undefined;
});

/** A workspace whose settings pre-allow Bash (`file`) and define a hook in both project files. */
async function workspaceWith(file: "settings.json" | "settings.local.json"): Promise<CliEnv> {
  const hook = (name: string) => ({ hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: `touch ${name}` }] }] } });
  const env = await startCliEnv({
    scenarios: [bashScenario],
    files: {
      "CLAUDE.md": `${memoryMarker}: project memory`,
      ".claude/settings.json": JSON.stringify(file === "settings.json" ? { permissions: { allow: ["Bash"] }, ...hook("HOOK_PROJECT") } : hook("HOOK_PROJECT")),
      ".claude/settings.local.json": JSON.stringify(file === "settings.local.json" ? { permissions: { allow: ["Bash"] }, ...hook("HOOK_LOCAL") } : hook("HOOK_LOCAL")),
    },
  });
  return env;
}

function hooksRan(env: CliEnv): string[] {
  return ["HOOK_PROJECT", "HOOK_LOCAL"].filter((name) => existsSync(path.join(env.cwd, name)));
}

function sawMemory(env: CliEnv): boolean {
  return env.server.requests.some((r) => r.kind === "messages" && JSON.stringify(r.body).includes(memoryMarker));
}

async function conduitTurn(env: CliEnv, workspaceSettings?: "trusted"): Promise<PermissionQuestion[]> {
  const questions: PermissionQuestion[] = [];
  kit = createRealRunner(env, {
    runner: workspaceSettings ? { workspaceSettings } : {},
    decide: (question) => {
      questions.push(question);
      return allowAsProposed(question);
    },
  });
  await kit.runner.start();
  await kit.turn("settingsbash please");
  return questions;
}

describe("the CLI on its own (all setting sources): what Conduit must prevent", () => {
  it("runs Bash without asking when settings.local.json allows it, and runs the hooks", async () => {
    cliEnv = await workspaceWith("settings.local.json");
    const cli = spawnTestCli(cliEnv, ["--permission-mode", "default"]);
    const turn = await runTurn(cli, "settingsbash please");
    expect(turn.permissionRequests).toEqual([]);
    expect(existsSync(path.join(cliEnv.cwd, "out.txt"))).toBe(true);
    expect(hooksRan(cliEnv).sort()).toEqual(["HOOK_LOCAL", "HOOK_PROJECT"]);
    await cli.stop();
  });

  it("ignores settings.json allow rules in a workspace it has not trusted, but trusts what .claude.json in its config dir says", async () => {
    cliEnv = await workspaceWith("settings.json");
    const first = spawnTestCli(cliEnv, ["--permission-mode", "default"]);
    expect((await runTurn(first, "settingsbash please")).permissionRequests.map((r) => r.toolName)).toEqual(["Bash"]);
    await first.stop();
    await writeFile(path.join(cliEnv.configDir, ".claude.json"), JSON.stringify({ projects: { [cliEnv.cwd]: { hasTrustDialogAccepted: true } } }));
    const second = spawnTestCli(cliEnv, ["--permission-mode", "default"]);
    expect((await runTurn(second, "settingsbash again")).permissionRequests).toEqual([]);
    await second.stop();
  });
});

describe("Conduit's spawn flags", () => {
  it("ask for Bash although settings.local.json allows it, run no hook, and keep CLAUDE.md", async () => {
    cliEnv = await workspaceWith("settings.local.json");
    const questions = await conduitTurn(cliEnv);
    expect(questions.map((q) => q.request.tool_name)).toEqual(["Bash"]);
    expect(existsSync(path.join(cliEnv.cwd, "out.txt"))).toBe(true);
    expect(hooksRan(cliEnv)).toEqual([]);
    expect(sawMemory(cliEnv)).toBe(true);
  });

  it("ask for Bash although settings.json allows it and the config dir's .claude.json trusts the workspace", async () => {
    cliEnv = await workspaceWith("settings.json");
    await writeFile(
      path.join(cliEnv.configDir, ".claude.json"),
      JSON.stringify({ projects: { [cliEnv.cwd]: { hasTrustDialogAccepted: true, allowedTools: ["Bash"] } } }),
    );
    await writeFile(path.join(cliEnv.configDir, "settings.json"), JSON.stringify({ permissions: { allow: ["Bash"] } }));
    const questions = await conduitTurn(cliEnv);
    expect(questions.map((q) => q.request.tool_name)).toEqual(["Bash"]);
    expect(hooksRan(cliEnv)).toEqual([]);
  });

  it("let trusted settings apply: the local allow rule and the hooks", async () => {
    cliEnv = await workspaceWith("settings.local.json");
    const questions = await conduitTurn(cliEnv, "trusted");
    expect(questions).toEqual([]);
    expect(hooksRan(cliEnv).sort()).toEqual(["HOOK_LOCAL", "HOOK_PROJECT"]);
    expect(sawMemory(cliEnv)).toBe(true);
  });
});
