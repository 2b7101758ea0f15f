/**
 * The session cgroups on the real kernel (cgroup v1 as root here and in CI; skipped where this
 * process cannot create cgroups): limits written, a setsid grandchild inside, the kill empties
 * everything, an over-allocation is an OOM kill, leftovers of an earlier run are cleaned up.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "@/test/until";
import { findCgroupLayout, oomExitReason, openSessionCgroups, type SessionCgroup, type SessionCgroups } from "./session-cgroup";

const usable = !("problem" in findCgroupLayout("probe"));
const opened: SessionCgroups[] = [];

function open(caps = { memoryMb: 64, pidsMax: 32 }, sidecarId = `test-${randomUUID().slice(0, 8)}`, onOomKills?: (n: number) => void) {
  const result = openSessionCgroups({ sidecarId, caps, ...(onOomKills ? { onOomKills } : {}) });
  if (result.cgroups === undefined) throw new Error(`cgroups not usable: ${result.status.reason}`);
  opened.push(result.cgroups);
  return result.cgroups;
}

/** Starts `node -e script` inside `cgroup`; resolves with its exit once it ends. */
function run(cgroup: SessionCgroup, script: string) {
  const launch = cgroup.wrap({ file: process.execPath, args: ["-e", script], cwd: process.cwd(), env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
  const child = spawn(launch.file, [...launch.args], { cwd: launch.cwd, env: launch.env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, stdout: () => stdout };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];
    return state !== "Z";
  } catch {
    return false;
  }
};

afterEach(async () => {
  for (const cgroups of opened.splice(0)) {
    await cgroups.cleanLeftovers();
    await cgroups.close();
  }
});

// Skipped where this process cannot create cgroups (not root, no cgroup v1 memory/pids/freezer, v2 without
// delegation): the kernel feature is missing, not the code. CI runs as root on cgroup v1, where these run.
describe.skipIf(!usable)("session cgroups (real kernel)", () => {
  it("writes the caps, starts the child inside, keeps a setsid grandchild inside, and the kill empties and removes it", async () => {
    const cgroups = open({ memoryMb: 64, pidsMax: 32 });
    const cgroup = await cgroups.create("sess");
    expect(cgroup.name).toBe("sess-1");
    const layout = cgroups.layout;
    if (layout.version !== "v1") throw new Error("this test expects cgroup v1");
    const memoryDir = path.join(layout.memory, cgroup.name);
    expect(readFileSync(path.join(memoryDir, "memory.limit_in_bytes"), "utf8").trim()).toBe(String(64 * 1024 * 1024));
    if (layout.pids !== undefined) expect(readFileSync(path.join(layout.pids, cgroup.name, "pids.max"), "utf8").trim()).toBe("32");

    // the child starts a grandchild in a session of its own (it leaves the process group)
    const script = `const c = require("node:child_process").spawn("sleep", ["317"], { detached: true, stdio: "ignore" }); c.unref(); console.log(c.pid); setInterval(() => {}, 1000);`;
    const child = run(cgroup, script);
    await until(() => child.stdout().trim() !== "", 10_000, "the grandchild's pid");
    const grandchild = Number(child.stdout().trim());
    expect(cgroup.pids()).toEqual(expect.arrayContaining([child.child.pid, grandchild]));
    // a process-group kill (what stop did before) leaves the grandchild running
    process.kill(-child.child.pid!, "SIGKILL");
    await child.exited;
    expect(alive(grandchild)).toBe(true);
    expect(cgroup.pids()).toContain(grandchild);

    await cgroup.destroy();
    expect(alive(grandchild)).toBe(false);
    expect(existsSync(memoryDir)).toBe(false);
    if (layout.pids !== undefined) expect(existsSync(path.join(layout.pids, cgroup.name))).toBe(false);
  });

  it("caps the number of processes", async () => {
    const cgroups = open({ memoryMb: 0, pidsMax: 6 });
    const cgroup = await cgroups.create("forks");
    const script = `const cp = require("node:child_process"); let ok = 0, refused = 0;
      for (let i = 0; i < 20; i++) { try { const c = cp.spawnSync("sleep", ["0.5"]); if (c.error) refused++; else ok++; } catch { refused++; } }
      const kids = []; for (let i = 0; i < 20; i++) { const c = cp.spawn("sleep", ["5"]); c.on("error", () => refused++); kids.push(c); }
      setTimeout(() => { console.log(JSON.stringify({ refused })); process.exit(0); }, 1500);`;
    const child = run(cgroup, script);
    const exit = await child.exited;
    expect(exit.code).toBe(0);
    expect((JSON.parse(child.stdout().trim()) as { refused: number }).refused).toBeGreaterThan(0);
    await cgroup.destroy();
  });

  it("tells an OOM kill at the cap from a crash, and counts it", async () => {
    const counted: number[] = [];
    const cgroups = open({ memoryMb: 64, pidsMax: 32 }, undefined, (n) => counted.push(n));
    const cgroup = await cgroups.create("hog");
    // 200 MB touched in 8 MB steps, against a 64 MB cap
    const child = run(cgroup, `const keep = []; for (let i = 0; i < 25; i++) keep.push(Buffer.alloc(8 * 1024 * 1024, 1)); console.log("survived");`);
    const exit = await child.exited;
    expect(exit.signal).toBe("SIGKILL");
    expect(child.stdout()).not.toContain("survived");
    const facts = cgroup.facts();
    expect(facts.oomKills).toBeGreaterThan(0);
    expect(oomExitReason(exit, facts, cgroups.caps)).toMatch(/memory cap of 64 MB/);
    await cgroup.destroy();
    expect(counted.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);

    // a plain crash in another cgroup is not one
    const calm = await cgroups.create("calm");
    const crash = await run(calm, `process.kill(process.pid, "SIGKILL")`).exited;
    expect(crash.signal).toBe("SIGKILL");
    expect(oomExitReason(crash, calm.facts(), cgroups.caps)).toBeUndefined();
    await calm.destroy();
  });

  it("an earlier run's leftovers: processes killed, directories removed; close removes the sidecar's parent", async () => {
    const sidecarId = `test-${randomUUID().slice(0, 8)}`;
    const first = openSessionCgroups({ sidecarId, caps: { memoryMb: 64, pidsMax: 32 } }).cgroups!;
    const orphan = await first.create("orphan");
    const child = run(orphan, `setInterval(() => {}, 1000)`);
    await until(() => orphan.pids().length > 0, 10_000, "the orphan inside");
    // the sidecar died without cleaning up: a new one with the same id starts
    const second = open({ memoryMb: 64, pidsMax: 32 }, sidecarId);
    const report = await second.cleanLeftovers();
    expect(report.removed).toEqual(["orphan-1"]);
    expect(report.killed).toBe(1);
    expect((await child.exited).signal).toBe("SIGKILL");
    const layout = second.layout;
    if (layout.version !== "v1") throw new Error("this test expects cgroup v1");
    expect(existsSync(path.join(layout.memory, "orphan-1"))).toBe(false);
    await second.close();
    expect(existsSync(layout.memory)).toBe(false);
  });
});
