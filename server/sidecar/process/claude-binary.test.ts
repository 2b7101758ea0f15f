import { chmod, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaudeBinaryError, claudeVersion, resolveClaudeBinary } from "./claude-binary";

let dir: string;

async function script(name: string, body: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "claude-binary-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("resolveClaudeBinary", () => {
  it("finds the pinned package's native binary, not the install stub", async () => {
    const found = resolveClaudeBinary({ env: {} });
    expect(found).toMatch(/node_modules\/@anthropic-ai\/claude-code/);
    expect((await stat(found)).size).toBeGreaterThan(1_000_000);
  });

  it("honours CLAUDE_CLI_PATH, and an explicit path over it", async () => {
    const stub = await script("claude-stub.sh", "echo 1.0.0");
    expect(resolveClaudeBinary({ env: { CLAUDE_CLI_PATH: stub } })).toBe(stub);
    expect(resolveClaudeBinary({ cliPath: stub, env: { CLAUDE_CLI_PATH: "/nowhere" } })).toBe(stub);
  });

  it("says what is wrong when CLAUDE_CLI_PATH is not executable", async () => {
    const plain = path.join(dir, "not-executable");
    await writeFile(plain, "x");
    expect(() => resolveClaudeBinary({ env: { CLAUDE_CLI_PATH: plain } })).toThrow(ClaudeBinaryError);
    expect(() => resolveClaudeBinary({ env: { CLAUDE_CLI_PATH: path.join(dir, "missing") } })).toThrow(
      /CLAUDE_CLI_PATH points to/,
    );
  });
});

describe("claudeVersion", () => {
  it("parses the version line", async () => {
    expect(await claudeVersion(await script("version-ok.sh", 'echo "2.1.332 (Claude Code)"'))).toBe("2.1.332");
  });

  it("fails clearly when the binary fails or prints no version", async () => {
    await expect(claudeVersion(await script("version-fails.sh", "echo broken >&2; exit 3"))).rejects.toThrow(
      /--version` failed: broken/,
    );
    await expect(claudeVersion(await script("version-empty.sh", "echo hello"))).rejects.toThrow(/printed no version/);
    await expect(claudeVersion(path.join(dir, "absent"))).rejects.toBeInstanceOf(ClaudeBinaryError);
  });
});
