import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  cgroupEnterScript,
  findCgroupLayout,
  oomExitReason,
  oomKillCount,
  openSessionCgroups,
  parseCgroupMounts,
  parseSelfCgroup,
  type CgroupHost,
} from "./session-cgroup";

// A hybrid host like the CI machine: v1 controllers, an empty v2 hierarchy.
const mountinfo = [
  "30 25 0:26 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw,mode=755",
  "31 30 0:27 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw",
  "34 30 0:30 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory",
  "35 30 0:31 / /sys/fs/cgroup/pids rw,relatime shared:13 - cgroup cgroup rw,pids",
  "36 30 0:32 / /sys/fs/cgroup/freezer rw,relatime shared:14 - cgroup cgroup rw,freezer",
  "37 30 0:33 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:15 - cgroup cgroup rw,cpu,cpuacct",
].join("\n");
const selfCgroup = ["8:pids:/", "6:freezer:/", "4:memory:/jobs/abc", "1:cpu,cpuacct:/", "0::/"].join("\n");

const host = (over: Partial<CgroupHost> = {}): CgroupHost => ({
  mountinfo: () => mountinfo,
  selfCgroup: () => selfCgroup,
  uid: () => 0,
  ...over,
});

describe("parsing /proc/self", () => {
  it("finds each v1 controller's mount and the v2 mount", () => {
    const mounts = parseCgroupMounts(mountinfo);
    expect(mounts.get("memory")).toEqual({ mountPoint: "/sys/fs/cgroup/memory", root: "/" });
    expect(mounts.get("cpuacct")?.mountPoint).toBe("/sys/fs/cgroup/cpu,cpuacct");
    expect(mounts.get("")?.mountPoint).toBe("/sys/fs/cgroup/unified");
    expect(mounts.has("tmpfs")).toBe(false);
  });

  it("reads the process's cgroup per controller", () => {
    const paths = parseSelfCgroup(selfCgroup);
    expect(paths.get("memory")).toBe("/jobs/abc");
    expect(paths.get("cpuacct")).toBe("/");
    expect(paths.get("")).toBe("/");
  });
});

describe("findCgroupLayout", () => {
  it("puts v1 session cgroups below the sidecar's own cgroup of each controller", () => {
    expect(findCgroupLayout("node-1", host())).toEqual({
      version: "v1",
      memory: "/sys/fs/cgroup/memory/jobs/abc/conduit/node-1",
      pids: "/sys/fs/cgroup/pids/conduit/node-1",
      freezer: "/sys/fs/cgroup/freezer/conduit/node-1",
    });
  });

  it("reads paths relative to a mount that shows a subtree (a cgroup namespace or bind mount)", () => {
    const info = "34 30 0:30 /jobs /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory";
    expect(findCgroupLayout("n", host({ mountinfo: () => info, selfCgroup: () => "4:memory:/jobs/abc" }))).toEqual({
      version: "v1",
      memory: "/sys/fs/cgroup/memory/abc/conduit/n",
    });
  });

  it("refuses without root, and without any memory controller", () => {
    expect(findCgroupLayout("n", host({ uid: () => 1000 }))).toEqual({ problem: expect.stringContaining("root") });
    expect(findCgroupLayout("n", host({ mountinfo: () => "" }))).toEqual({ problem: expect.stringContaining("no cgroup memory controller") });
  });

  it("refuses a v2 hierarchy that offers the sidecar no memory controller", () => {
    const info = "31 25 0:27 / /nonexistent-cgroup2 rw - cgroup2 cgroup2 rw";
    const found = findCgroupLayout("n", host({ mountinfo: () => info, selfCgroup: () => "0::/user.slice" }));
    expect(found).toEqual({ problem: expect.stringContaining("no memory controller") });
  });
});

describe("openSessionCgroups when cgroups are not usable", () => {
  it("says why, and gives no cgroups (sessions run uncapped)", () => {
    const opened = openSessionCgroups({ sidecarId: "n", caps: { memoryMb: 200, pidsMax: 64 }, host: host({ uid: () => 1000 }) });
    expect(opened.cgroups).toBeUndefined();
    expect(opened.status).toEqual({ on: false, reason: expect.stringContaining("root") });
  });

  it("is off when both caps are 0", () => {
    const opened = openSessionCgroups({ sidecarId: "n", caps: { memoryMb: 0, pidsMax: 0 }, host: host() });
    expect(opened.cgroups).toBeUndefined();
    expect(opened.status.on).toBe(false);
  });

  it("is off when the directories cannot be made", () => {
    const info = "34 30 0:30 / /etc/hostname rw - cgroup cgroup rw,memory";
    const opened = openSessionCgroups({ sidecarId: "n", caps: { memoryMb: 200, pidsMax: 0 }, host: host({ mountinfo: () => info }) });
    expect(opened.cgroups).toBeUndefined();
    expect(opened.status).toEqual({ on: false, reason: expect.stringContaining("not usable") });
  });
});

describe("OOM facts", () => {
  it("reads the oom_kill counter of memory.oom_control and memory.events", () => {
    expect(oomKillCount("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")).toBe(2);
    expect(oomKillCount("low 0\nhigh 0\nmax 14\noom 1\noom_kill 1\noom_group_kill 0\n")).toBe(1);
    expect(oomKillCount("oom_kill_disable 0\nunder_oom 0\n")).toBe(0);
    expect(oomKillCount(undefined)).toBe(0);
  });

  it("names the cap only for a SIGKILL with an OOM kill counted", () => {
    const caps = { memoryMb: 200, pidsMax: 64 };
    expect(oomExitReason({ signal: "SIGKILL" }, { oomKills: 1 }, caps)).toMatch(/memory cap of 200 MB/);
    expect(oomExitReason({ signal: "SIGKILL" }, { oomKills: 0 }, caps)).toBeUndefined();
    expect(oomExitReason({ signal: null }, { oomKills: 1 }, caps)).toBeUndefined();
    expect(oomExitReason({ signal: "SIGKILL" }, undefined, caps)).toBeUndefined();
  });

  it("ships its launcher next to the module", () => {
    expect(cgroupEnterScript).toMatch(/process\/cgroup-enter\.sh$/);
  });
});

describe("cgroup v2 layout (on a directory that stands in for cgroupfs)", () => {
  it("enables memory and pids below the sidecar's cgroup, writes memory.max, no swap, pids.max, and one cgroup.procs", async () => {
    const fs = mkdtempSync(path.join(os.tmpdir(), "conduit-cgroup2-"));
    try {
      mkdirSync(path.join(fs, "svc"));
      writeFileSync(path.join(fs, "svc", "cgroup.controllers"), "cpu memory pids\n");
      const v2host = host({ mountinfo: () => `31 25 0:27 / ${fs} rw - cgroup2 cgroup2 rw`, selfCgroup: () => "0::/svc" });
      const opened = openSessionCgroups({ sidecarId: "n2", caps: { memoryMb: 300, pidsMax: 40 }, host: v2host });
      expect(opened.status).toMatchObject({ on: true, kind: "cgroup", version: "v2", memoryMb: 300, pidsMax: 40, limits: { memoryMb: 300, memoryScope: "session", processes: 40, processScope: "session", fileSizeMb: null } });
      const base = path.join(fs, "svc", "conduit", "n2");
      expect(opened.cgroups?.layout).toEqual({ version: "v2", unified: base });
      expect(readFileSync(path.join(fs, "svc", "cgroup.subtree_control"), "utf8")).toBe("+memory +pids");
      expect(readFileSync(path.join(base, "cgroup.subtree_control"), "utf8")).toBe("+memory +pids");
      const cgroup = await opened.cgroups!.create("s");
      const dir = path.join(base, cgroup.name);
      expect(readFileSync(path.join(dir, "memory.max"), "utf8")).toBe(String(300 * 1024 * 1024));
      expect(readFileSync(path.join(dir, "memory.swap.max"), "utf8")).toBe("0");
      expect(readFileSync(path.join(dir, "pids.max"), "utf8")).toBe("40");
      expect(cgroup.procsFiles).toEqual([path.join(dir, "cgroup.procs")]);
      expect(cgroup.wrap({ file: "/usr/bin/claude", args: ["-p"], cwd: "/w", env: {} })).toEqual({
        file: "/bin/sh",
        args: [cgroupEnterScript, path.join(dir, "cgroup.procs"), "--", "/usr/bin/claude", "-p"],
        cwd: "/w",
        env: {},
      });
      writeFileSync(path.join(dir, "memory.events"), "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
      expect(cgroup.facts()).toEqual({ oomKills: 1 });
    } finally {
      rmSync(fs, { recursive: true, force: true });
    }
  });
});
