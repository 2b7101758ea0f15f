import { execFileSync } from "node:child_process";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { execFileHere, setExecFileRunner, type ExecFileOptions } from "@/server/workspace-fs/exec-file";
import { guardOverrides } from "./git-config-guard";
import { findCheckout, gitIn } from "./open-repository";
import { configEnv, fixedGitConfig, gitEnv, runGit } from "./run-git";

/** The command-line settings an environment carries, in order, as [key, value]. */
function settingsOf(env: NodeJS.ProcessEnv): [string, string][] {
  const count = Number(env.GIT_CONFIG_COUNT);
  return Array.from({ length: count }, (_, i) => [env[`GIT_CONFIG_KEY_${i}`]!, env[`GIT_CONFIG_VALUE_${i}`]!]);
}

describe("configEnv", () => {
  it("numbers keys and values from 0, keeps empty values and `=` inside values", () => {
    expect(configEnv(["core.hooksPath=/dev/null", "diff.external=", "filter.x.clean=a=b"])).toEqual({
      GIT_CONFIG_COUNT: "3",
      GIT_CONFIG_KEY_0: "core.hooksPath",
      GIT_CONFIG_VALUE_0: "/dev/null",
      GIT_CONFIG_KEY_1: "diff.external",
      GIT_CONFIG_VALUE_1: "",
      GIT_CONFIG_KEY_2: "filter.x.clean",
      GIT_CONFIG_VALUE_2: "a=b",
    });
    expect(configEnv([])).toEqual({ GIT_CONFIG_COUNT: "0" });
  });

  it("refuses a setting without a key", () => {
    expect(() => configEnv(["core.hooksPath"])).toThrow(/key=value/);
    expect(() => configEnv(["=x"])).toThrow(/key=value/);
  });
});

describe("gitEnv", () => {
  it("carries the fixed settings then safe.directory for the call's directory, last", () => {
    const env = gitEnv("/ws/root", {}, fixedGitConfig, "/ws/root/.conduit/worktrees/abc");
    const settings = settingsOf(env);
    expect(settings.slice(0, fixedGitConfig.length).map(([k, v]) => `${k}=${v}`)).toEqual([...fixedGitConfig]);
    expect(settings.at(-1)).toEqual(["safe.directory", "/ws/root/.conduit/worktrees/abc"]);
    expect(settings).toHaveLength(fixedGitConfig.length + 1);
    expect(settings).toContainEqual(["core.hooksPath", "/dev/null"]);
    expect(settings).toContainEqual(["core.fsmonitor", "false"]);
    expect(env.GIT_CEILING_DIRECTORIES).toBe("/ws");
    expect(env.GIT_CONFIG_NOSYSTEM).toBe("1");
  });

  it("defaults safe.directory to the ceiling, and nothing of the server's environment leaks in", () => {
    process.env.CONDUIT_TEST_SECRET = "s3cret";
    try {
      const env = gitEnv("/ws/root", { GIT_AUTHOR_NAME: "Ada" });
      expect(settingsOf(env).at(-1)).toEqual(["safe.directory", "/ws/root"]);
      expect(env.GIT_AUTHOR_NAME).toBe("Ada");
      expect(Object.values(env)).not.toContain("s3cret");
      expect(Object.keys(env).filter((k) => k.startsWith("GIT_CONFIG_KEY_")).length).toBe(Number(env.GIT_CONFIG_COUNT));
    } finally {
      delete process.env.CONDUIT_TEST_SECRET;
    }
  });

  it("an extra environment cannot replace the command-line settings", () => {
    const env = gitEnv("/ws/root", { GIT_CONFIG_COUNT: "0", GIT_CONFIG_KEY_0: "core.hooksPath", GIT_CONFIG_VALUE_0: "/evil" });
    expect(Number(env.GIT_CONFIG_COUNT)).toBe(fixedGitConfig.length + 1);
    expect(settingsOf(env)[0]).toEqual(["core.hooksPath", "/dev/null"]);
  });
});

describe("runGit with a real repository", () => {
  let dir: string;
  let root: string;
  const calls: { args: readonly string[]; options: ExecFileOptions }[] = [];

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-rungit-")));
    root = path.join(dir, "ws");
    execFileSync("git", ["init", "-q", root], { env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" } });
    const cfg = (...args: string[]) => execFileSync("git", ["config", ...args], { cwd: root, env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" } });
    cfg("core.hooksPath", path.join(root, "evil-hooks"));
    cfg("core.fsmonitor", path.join(root, "evil-fsmonitor"));
    cfg("filter.evil.clean", "touch /nonexistent/x; cat");
    cfg("filter.evil.required", "true");
    cfg("diff.evil.textconv", "touch /nonexistent/y; cat");
    setExecFileRunner((file, args, options, input) => {
      calls.push({ args, options });
      return execFileHere(file, args, options, input);
    });
  });

  afterEach(() => {
    calls.length = 0;
  });

  afterAll(async () => {
    setExecFileRunner(execFileHere);
    await rm(dir, { recursive: true, force: true });
  });

  it("puts no -c in git's argv; the settings travel in GIT_CONFIG_COUNT and outrank the repository's", async () => {
    const checkout = await findCheckout({ root });
    expect(checkout).toBeDefined();
    const hooks = await gitIn(checkout!, ["config", "--get", "core.hooksPath"]);
    expect(hooks.stdout.toString("utf8").trim()).toBe("/dev/null");
    const fsmonitor = await gitIn(checkout!, ["config", "--get", "core.fsmonitor"]);
    expect(fsmonitor.stdout.toString("utf8").trim()).toBe("false");
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call.args).not.toContain("-c");
      expect(call.args.some((a) => a.startsWith("--config-env"))).toBe(false);
      expect(settingsOf(call.options.env!).at(-1)).toEqual(["safe.directory", root]);
    }
  });

  it("the config guard's overrides flow through GIT_CONFIG_COUNT, empty values included", async () => {
    const checkout = await findCheckout({ root });
    expect(checkout!.config).toEqual(expect.arrayContaining(guardOverrides(["filter.evil.clean", "diff.evil.textconv"])));
    calls.length = 0;
    const clean = await gitIn(checkout!, ["config", "--get", "filter.evil.clean"]);
    expect(clean.code).toBe(0);
    expect(clean.stdout.toString("utf8")).toBe("\n");
    const required = await gitIn(checkout!, ["config", "--get", "filter.evil.required"]);
    expect(required.stdout.toString("utf8").trim()).toBe("false");
    const textconv = await gitIn(checkout!, ["config", "--get", "diff.evil.textconv"]);
    expect(textconv.stdout.toString("utf8")).toBe("\n");
    const settings = settingsOf(calls[0]!.options.env!);
    expect(settings).toContainEqual(["filter.evil.clean", ""]);
    expect(settings).toContainEqual(["filter.evil.required", "false"]);
    expect(settings).toContainEqual(["diff.evil.textconv", ""]);
    expect(settings.at(-1)).toEqual(["safe.directory", root]);
    // a filtered file is still added, its bytes as they are
    await writeFile(path.join(root, ".gitattributes"), "*.txt filter=evil diff=evil\n");
    await writeFile(path.join(root, "a.txt"), "plain\n");
    expect((await gitIn(checkout!, ["add", "a.txt", ".gitattributes"])).code).toBe(0);
    const blob = await runGit({ cwd: root, ceiling: root, args: ["cat-file", "-p", ":a.txt"] });
    expect(blob.stdout.toString("utf8")).toBe("plain\n");
  });
});
