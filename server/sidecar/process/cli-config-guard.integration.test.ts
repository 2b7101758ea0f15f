/**
 * The config guard through real doors (bubblewrap when it works here, and the unsandboxed form,
 * whose only protection is how the door opens files): a session writes its CLI config directory,
 * so a `.claude.json` that is a link to a file elsewhere, or links planted at the names a write
 * might use, must never make the guard read, copy or overwrite anything outside it.
 */
import { execFileSync } from "node:child_process";
import { lstat, mkdir, mkdtemp, readFile, readlink, realpath, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createDoorLauncher, DoorPool, doorPoolDefaults, setWorkspaceDoor } from "@/server/workspace-agent";
import { findOnPath } from "@/server/workspace-agent/host-system";
import { claudeTranscriptExists } from "./claude-transcript-exists";
import { grantCliProjectTrust, revokeCliProjectGrants } from "./cli-config-guard";

const canary = `conduit-guard-canary-${Math.random().toString(36).slice(2)}`;
/** What the outside file holds: grants a naive guard would rewrite, and the canary. */
const outsideBytes = JSON.stringify({ canary, projects: { "/w": { hasTrustDialogAccepted: true, allowedTools: ["Bash"] } } });
let base: string;
let configDir: string;
let outsideFile: string;
let n = 0;

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-guard-it-")));
  await mkdir(path.join(base, "outside"));
  outsideFile = path.join(base, "outside", "secret.json");
  await writeFile(outsideFile, outsideBytes, { mode: 0o600 });
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

beforeEach(async () => {
  // a fresh config directory per test (one door each)
  configDir = path.join(base, `config-${n++}`);
  await mkdir(configDir, { mode: 0o700 });
});

const configFile = () => path.join(configDir, ".claude.json");

async function expectOutsideUntouched(): Promise<void> {
  expect(await readFile(outsideFile, "utf8")).toBe(outsideBytes);
}

const modes = findOnPath("bwrap") ? (["bwrap", "off"] as const) : (["off"] as const);

describe.each(modes)("the CLI config guard through its door (%s)", (setting) => {
  let pool: DoorPool;

  beforeAll(async () => {
    pool = new DoorPool({ ...doorPoolDefaults, launcher: () => createDoorLauncher({ setting }), idleMs: 500 });
    expect(await pool.mode()).toBe(setting);
    setWorkspaceDoor(pool);
  });

  afterAll(() => {
    setWorkspaceDoor(undefined);
    pool.close();
  });

  it("rewrites .claude.json only when a session granted itself something", async () => {
    expect(await revokeCliProjectGrants(configDir)).toBe(false); // no file
    await writeFile(configFile(), "{not json");
    expect(await revokeCliProjectGrants(configDir)).toBe(false);
    await writeFile(configFile(), JSON.stringify({ projects: { "/w": { hasTrustDialogAccepted: true } } }));
    expect(await revokeCliProjectGrants(configDir)).toBe(true);
    expect(JSON.parse(await readFile(configFile(), "utf8"))).toEqual({ projects: { "/w": {} } });
    expect((await lstat(configFile())).mode & 0o777).toBe(0o600);
    // a config directory that is not there: nothing to guard
    expect(await revokeCliProjectGrants(path.join(base, "missing"))).toBe(false);
  });

  it("marks the workspace trusted, keeping the rest of the config", async () => {
    await writeFile(configFile(), JSON.stringify({ userID: "u", projects: { "/other": { x: 1 } } }));
    await grantCliProjectTrust(configDir, "/ws/a");
    expect(JSON.parse(await readFile(configFile(), "utf8"))).toEqual({ userID: "u", projects: { "/other": { x: 1 }, "/ws/a": { hasTrustDialogAccepted: true } } });
  });

  it("replaces a .claude.json that is a link to a file outside, never reading or writing through it", async () => {
    await symlink(outsideFile, configFile());
    expect(await revokeCliProjectGrants(configDir)).toBe(true);
    await expectOutsideUntouched();
    expect((await lstat(configFile())).isFile()).toBe(true);
    expect(await readFile(configFile(), "utf8")).not.toContain(canary);
    expect(JSON.parse(await readFile(configFile(), "utf8"))).toEqual({});

    await rm(configFile());
    await symlink(outsideFile, configFile());
    await grantCliProjectTrust(configDir, "/ws/a");
    await expectOutsideUntouched();
    expect((await lstat(configFile())).isFile()).toBe(true);
    const written = await readFile(configFile(), "utf8");
    expect(written).not.toContain(canary);
    expect(JSON.parse(written)).toEqual({ projects: { "/ws/a": { hasTrustDialogAccepted: true } } });
  });

  it("follows no link planted at a temporary name a write might use", async () => {
    const planted = [`.claude.json.conduit-${process.pid}`, ...Array.from({ length: 20 }, (_, i) => `.claude.json.conduit-${i + 1}`), ".claude.json.tmp", ".claude.json.conduit-"];
    for (const name of planted) await symlink(outsideFile, path.join(configDir, name));
    await writeFile(configFile(), JSON.stringify({ projects: { "/w": { hasTrustDialogAccepted: true } } }));
    expect(await revokeCliProjectGrants(configDir)).toBe(true);
    await grantCliProjectTrust(configDir, "/ws/a");
    await expectOutsideUntouched();
    for (const name of planted) expect(await readlink(path.join(configDir, name))).toBe(outsideFile);
    expect(JSON.parse(await readFile(configFile(), "utf8"))).toEqual({ projects: { "/w": {}, "/ws/a": { hasTrustDialogAccepted: true } } });
  });

  it("does not hang on a FIFO at .claude.json, and leaves a directory there alone", async () => {
    execFileSync("mkfifo", [configFile()]);
    expect(await revokeCliProjectGrants(configDir)).toBe(true);
    expect((await lstat(configFile())).isFile()).toBe(true);
    await rm(configFile());
    await mkdir(configFile());
    expect(await revokeCliProjectGrants(configDir)).toBe(false);
    await expect(grantCliProjectTrust(configDir, "/ws/a")).rejects.toMatchObject({ code: "conflict" });
  });

  it("finds a conversation's transcript, but not through a link", async () => {
    const id = "0b6c1f5e-3f0e-4a7e-9a55-0d1f3e2a9c11";
    expect(await claudeTranscriptExists(configDir, id)).toBe(false);
    expect(await claudeTranscriptExists(path.join(base, "missing"), id)).toBe(false);
    await mkdir(path.join(configDir, "projects", "-ws-a"), { recursive: true });
    await symlink(outsideFile, path.join(configDir, "projects", "-ws-a", `${id}.jsonl`));
    expect(await claudeTranscriptExists(configDir, id)).toBe(false);
    await rm(path.join(configDir, "projects", "-ws-a", `${id}.jsonl`));
    await writeFile(path.join(configDir, "projects", "-ws-a", `${id}.jsonl`), "{}\n");
    expect(await claudeTranscriptExists(configDir, id)).toBe(true);
    expect(await claudeTranscriptExists(configDir, "../../etc/passwd")).toBe(false);
  });
});
