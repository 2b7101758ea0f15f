/**
 * Real doors (bubblewrap when it works here, and the unsandboxed form): what a door sees, what it
 * refuses, how the pool lives with its processes. The race test swaps a directory of the
 * workspace with a symlink to the outside while the door reads through it.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@/server/shared/errors/app-error";
import { createDoorLauncher } from "./door-launch";
import { DoorPool } from "./door-pool";
import { findOnPath } from "./host-system";
import type { DoorScope } from "./scope";

const canary = `conduit-door-canary-${Math.random().toString(36).slice(2)}`;
let base: string;
let ws: string;
let outside: string;

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-door-it-")));
  ws = path.join(base, "ws");
  outside = path.join(base, "outside");
  await mkdir(path.join(ws, "dir"), { recursive: true });
  await mkdir(path.join(ws, "inner"), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(ws, "dir", "f.txt"), "inside\n");
  await writeFile(path.join(ws, "inner", "nested.txt"), "nested workspace\n");
  await writeFile(path.join(outside, "f.txt"), `${canary}\n`);
  await symlink(path.join(outside, "f.txt"), path.join(ws, "link.txt"));
  await symlink(outside, path.join(ws, "linkdir"));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const modes = findOnPath("bwrap") ? (["bwrap", "off"] as const) : (["off"] as const);

describe.each(modes)("doors (%s)", (setting) => {
  let pool: DoorPool;
  const scope = (): DoorScope => ({ purpose: "files", workspace: { root: ws, excluded: [path.join(ws, "inner")] } });

  beforeAll(async () => {
    pool = new DoorPool({ launcher: () => createDoorLauncher({ setting }), idleMs: 300 });
    expect(await pool.mode()).toBe(setting);
  });
  afterAll(() => pool.close());

  it("reads and lists inside the workspace", async () => {
    expect(await pool.call(scope(), "files.read", { path: "dir/f.txt" })).toMatchObject({ kind: "text", content: "inside\n" });
    const listing = await pool.call(scope(), "files.list", { path: "" });
    expect(listing.entries.map((e) => e.name)).toEqual(expect.arrayContaining(["dir"]));
  });

  it("never reads or writes outside through a link, and hides nested workspaces", async () => {
    await expect(pool.call(scope(), "files.read", { path: "link.txt" })).rejects.toBeInstanceOf(AppError);
    await expect(pool.call(scope(), "files.read", { path: "linkdir/f.txt" })).rejects.toBeInstanceOf(AppError);
    await expect(pool.call(scope(), "files.save", { path: "linkdir/f.txt", content: "overwritten", baseVersion: null })).rejects.toBeInstanceOf(AppError);
    await expect(pool.call(scope(), "files.read", { path: "inner/nested.txt" })).rejects.toBeInstanceOf(AppError);
    expect(await readFile(path.join(outside, "f.txt"), "utf8")).toBe(`${canary}\n`);
  });

  it("runs only operations of its purpose", async () => {
    await expect(pool.call({ purpose: "git", workspace: { root: ws, excluded: [] } }, "files.read", { path: "dir/f.txt" })).rejects.toMatchObject({ code: "forbidden" });
    await expect(pool.call(scope(), "no.such.op" as "files.read", { path: "" })).rejects.toMatchObject({ code: "invalid_payload" });
    await expect(pool.call(scope(), "files.read", { path: 42 } as never)).rejects.toMatchObject({ code: "invalid_payload" });
  });

  it("reads a CLI plan file from its config directory's plans folder, never through a link, never by a path", async () => {
    const cfg = path.join(base, `cfg-${setting}`);
    const linked = path.join(base, `cfg-linked-${setting}`);
    await mkdir(path.join(cfg, "plans"), { recursive: true });
    await mkdir(linked);
    await writeFile(path.join(cfg, "plans", "dreamy-wiggling-marble.md"), "# The plan\n");
    await symlink(path.join(outside, "f.txt"), path.join(cfg, "plans", "link.md"));
    await writeFile(path.join(cfg, "plans", "huge.md"), "x".repeat(512 * 1024 + 1));
    await symlink(outside, path.join(linked, "plans"));
    const config = (dir: string): DoorScope => ({ purpose: "files", configDir: dir });
    expect(await pool.call(config(cfg), "config.readPlan", { name: "dreamy-wiggling-marble.md" })).toEqual({ kind: "file", text: "# The plan\n" });
    expect(await pool.call(config(cfg), "config.readPlan", { name: "link.md" })).toEqual({ kind: "other", type: "symlink" });
    expect(await pool.call(config(cfg), "config.readPlan", { name: "huge.md" })).toEqual({ kind: "other", type: "too_large" });
    expect(await pool.call(config(cfg), "config.readPlan", { name: "gone.md" })).toEqual({ kind: "absent" });
    expect(await pool.call(config(linked), "config.readPlan", { name: "f.md" })).toEqual({ kind: "other", type: "symlink" });
    await expect(pool.call(config(cfg), "config.readPlan", { name: "../plans/link.md" })).rejects.toMatchObject({ code: "invalid_payload" });
    await expect(pool.call(config(cfg), "config.readPlan", { name: ".claude.json" })).rejects.toMatchObject({ code: "invalid_payload" });
  });

  it("ends an idle door and starts it again on the next request", async () => {
    await pool.call(scope(), "files.version", { path: "dir/f.txt" });
    const started = pool.started;
    await new Promise((r) => setTimeout(r, 800));
    expect(pool.size()).toBe(0);
    await pool.call(scope(), "files.version", { path: "dir/f.txt" });
    expect(pool.started).toBe(started + 1);
  });

  it("wins no race: a directory swapped with a link to the outside in a loop never shows the outside", async () => {
    // The attacker: swap `race` (a real directory with f.txt) and a symlink to `outside`, as fast as it can.
    await mkdir(path.join(ws, "race"), { recursive: true });
    await writeFile(path.join(ws, "race", "f.txt"), "inside\n");
    await symlink(outside, path.join(ws, "race-link"));
    const script = `
      const fs = require("fs"); const p = require("path");
      const ws = ${JSON.stringify(ws)};
      const a = p.join(ws, "race"), b = p.join(ws, "race-link"), t = p.join(ws, "race-tmp");
      const end = Date.now() + 4000;
      while (Date.now() < end) { try { fs.renameSync(a, t); fs.renameSync(b, a); fs.renameSync(t, b); } catch {} }
    `;
    const attacker = spawn(process.execPath, ["-e", script], { stdio: "ignore" });
    let answers = 0;
    let outsideSeen = 0;
    try {
      const deadline = Date.now() + 3000;
      while (Date.now() < deadline) {
        const results = await Promise.allSettled([
          pool.call(scope(), "files.read", { path: "race/f.txt" }),
          pool.call(scope(), "files.list", { path: "race" }),
          pool.call(scope(), "files.save", { path: "race/f.txt", content: "written by the test\n", baseVersion: null }),
        ]);
        for (const r of results) {
          answers++;
          if (JSON.stringify(r.status === "fulfilled" ? r.value : String(r.reason)).includes(canary)) outsideSeen++;
        }
      }
    } finally {
      attacker.kill("SIGKILL");
    }
    expect(answers).toBeGreaterThan(100);
    // Without the sandbox the same race shows the outside now and then (1 in ~4,000 answers here): printed, not asserted.
    console.log(`race (${setting}): ${answers} answers, ${outsideSeen} showed the outside`);
    if (setting === "bwrap") {
      expect(outsideSeen).toBe(0);
      expect(await readFile(path.join(outside, "f.txt"), "utf8")).toBe(`${canary}\n`);
      expect(existsSync(path.join(outside, ".f.txt"))).toBe(false);
    }
    expect((await stat(path.join(outside, "f.txt"))).isFile()).toBe(true);
    await rm(path.join(ws, "race"), { recursive: true, force: true }).catch(() => undefined);
    await rm(path.join(ws, "race-link"), { recursive: true, force: true }).catch(() => undefined);
    await rm(path.join(ws, "race-tmp"), { recursive: true, force: true }).catch(() => undefined);
    await rename(path.join(outside, "f.txt"), path.join(outside, "f.txt"));
  });

  // Only with the sandbox: without it the door sees the host as this process does (that is the point of the sandbox).
  it.runIf(setting === "bwrap")("sees nothing of the host but the system and its scope", async () => {
    // The data directory, the checkout and /root are not in a door: a workspace-relative path cannot name them,
    // so probe with a scope whose workspace holds a link to each.
    const probeWs = path.join(base, "probe");
    await mkdir(probeWs, { recursive: true });
    await symlink(process.cwd(), path.join(probeWs, "checkout"));
    const probe: DoorScope = { purpose: "files", workspace: { root: probeWs, excluded: [] } };
    await expect(pool.call(probe, "files.list", { path: "checkout" })).rejects.toBeInstanceOf(AppError);
  });
});

describe("a door that dies", () => {
  it("fails the requests in flight as unavailable and starts again", async () => {
    const pool = new DoorPool({ launcher: () => createDoorLauncher({ setting: "off" }) });
    const scope: DoorScope = { purpose: "files", workspace: { root: ws, excluded: [] } };
    try {
      await pool.call(scope, "files.version", { path: "dir/f.txt" });
      // a search of a large tree would still be running; kill the door under a request
      const pending = pool.call(scope, "files.search", { query: "f" });
      const pids = (pool as unknown as { doors: Map<string, { child: { pid: number } }> }).doors;
      for (const door of pids.values()) process.kill(door.child.pid, "SIGKILL");
      await pending.then(
        () => undefined,
        (err: unknown) => expect(err).toMatchObject({ code: "unavailable" }),
      );
      expect(await pool.call(scope, "files.version", { path: "dir/f.txt" })).toMatchObject({ path: "dir/f.txt" });
      expect(pool.started).toBe(2);
    } finally {
      pool.close();
    }
  });
});
