import { describe, expect, it } from "vitest";
import { buildCliArgs, settingSourceFlags, streamJsonFlags } from "./build-cli-args";

const id = "0b6a3b8e-4a35-4c47-9a4e-1f1d2c3b4a59";

describe("buildCliArgs", () => {
  it("always has the stream-json flags, then the conversation and the mode", () => {
    expect(
      buildCliArgs({ claudeSessionId: id, resume: false, permissionMode: "default", includePartialMessages: false }),
    ).toEqual([...streamJsonFlags, "--session-id", id, "--permission-mode", "default", ...settingSourceFlags()]);
  });

  it("adds resume, model, partial messages, bypass and budget as configured", () => {
    expect(
      buildCliArgs({
        claudeSessionId: id,
        resume: true,
        permissionMode: "bypassPermissions",
        model: "claude-sonnet-4-5[1m]",
        allowBypass: true,
        maxBudgetUsd: 0.5,
      }).slice(streamJsonFlags.length),
    ).toEqual([
      "--resume",
      id,
      "--permission-mode",
      "bypassPermissions",
      "--model",
      "claude-sonnet-4-5[1m]",
      "--include-partial-messages",
      "--allow-dangerously-skip-permissions",
      "--max-budget-usd",
      "0.5",
      ...settingSourceFlags(),
    ]);
  });

  it("keeps every workspace setting source, hooks and the config dir's user settings out unless trusted", () => {
    const base = { claudeSessionId: id, resume: false, permissionMode: "default" as const };
    const untrusted = buildCliArgs(base);
    expect(untrusted.slice(untrusted.indexOf("--setting-sources"), untrusted.indexOf("--setting-sources") + 6)).toEqual([
      "--setting-sources",
      "",
      "--add-dir",
      ".",
      "--settings",
      '{"disableAllHooks":true,"env":{"CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD":"1"}}',
    ]);
    const trusted = buildCliArgs({ ...base, workspaceSettings: "trusted" });
    expect(trusted[trusted.indexOf("--setting-sources") + 1]).toBe("project,local");
    expect(trusted).not.toContain("--settings");
    expect(trusted).not.toContain("--add-dir");
  });

  it("refuses values that would become flags or mean something else", () => {
    const base = { claudeSessionId: id, resume: false, permissionMode: "default" as const };
    expect(() => buildCliArgs({ ...base, claudeSessionId: "--dangerously-skip-permissions" })).toThrow(/UUID/);
    expect(() => buildCliArgs({ ...base, model: "--dangerously-skip-permissions" })).toThrow(/model name/);
    expect(() => buildCliArgs({ ...base, model: "a b" })).toThrow(/model name/);
    expect(() => buildCliArgs({ ...base, permissionMode: "yolo" as never })).toThrow(/permission mode/);
    expect(() => buildCliArgs({ ...base, maxBudgetUsd: -1 })).toThrow(/positive/);
    expect(() => buildCliArgs({ ...base, maxBudgetUsd: Number.NaN })).toThrow(/positive/);
    expect(() => buildCliArgs({ ...base, permissionMode: "bypassPermissions" })).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
  });
});
