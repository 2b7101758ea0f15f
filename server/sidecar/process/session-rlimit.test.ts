import { describe, expect, it } from "vitest";
import { openSessionCaps, openSessionRlimits, rlimitPlan } from "./session-rlimit";

const MB = 1024 * 1024;

describe("rlimitPlan", () => {
  it("memory per process (RLIMIT_DATA), processes of the user (pids × sessions), file size", () => {
    const plan = rlimitPlan({ caps: { memoryMb: 2048, pidsMax: 512 }, fileSizeMb: 8192, sessionMax: 20, uid: 1000 });
    expect(plan.args).toEqual([`--data=${2048 * MB}`, "--nproc=10240", `--fsize=${8192 * MB}`]);
    expect(plan.limits).toEqual({ memoryMb: 2048, memoryScope: "process", processes: 10240, processScope: "user", fileSizeMb: 8192 });
    expect(plan.raised).toBe(false);
  });

  it("raises a memory limit the CLI could not start under, and claims no process limit for root", () => {
    const plan = rlimitPlan({ caps: { memoryMb: 256, pidsMax: 64 }, fileSizeMb: 0, sessionMax: 4, uid: 0 });
    expect(plan.args).toEqual([`--data=${1024 * MB}`]);
    expect(plan.limits).toMatchObject({ memoryMb: 1024, processes: null, fileSizeMb: null });
    expect(plan.raised).toBe(true);
  });
});

describe("openSessionRlimits", () => {
  const options = { caps: { memoryMb: 2048, pidsMax: 512 }, fileSizeMb: 100, sessionMax: 2, uid: 1000, findPrlimit: () => "/usr/bin/prlimit" };

  it("starts each spawn through prlimit, which execs the rest of the argv", async () => {
    const opened = openSessionRlimits({ ...options, probe: () => undefined });
    expect(opened.status).toMatchObject({ on: true, kind: "rlimit", limits: { processes: 1024, processScope: "user" } });
    const spawn = await opened.confinement!.create("s1");
    expect(spawn.wrap({ file: "/usr/bin/bwrap", args: ["--x", "--", "claude"], cwd: "/w", env: {} })).toEqual({
      file: "/usr/bin/prlimit",
      args: [`--data=${2048 * MB}`, "--nproc=1024", `--fsize=${100 * MB}`, "--", "/usr/bin/bwrap", "--x", "--", "claude"],
      cwd: "/w",
      env: {},
    });
    expect(spawn.facts()).toEqual({ oomKills: 0 });
  });

  it("says why when prlimit is missing or fails", () => {
    expect(openSessionRlimits({ ...options, findPrlimit: () => undefined, probe: () => undefined }).status).toEqual({ on: false, reason: expect.stringContaining("apt-get install util-linux") });
    expect(openSessionRlimits({ ...options, probe: () => "prlimit: failed" }).status).toEqual({ on: false, reason: expect.stringContaining("prlimit: failed") });
  });

  it("works with the real prlimit of this host", () => {
    const { findPrlimit: _ignored, ...real } = options;
    const opened = openSessionRlimits(real);
    if (opened.confinement === undefined) expect(opened.status.reason).toMatch(/prlimit/);
    else expect(opened.status.on).toBe(true);
  });
});

describe("openSessionCaps", () => {
  const cgroupOptions = { sidecarId: "n", caps: { memoryMb: 2048, pidsMax: 512 } };
  const rlimitOptions = { fileSizeMb: 100, sessionMax: 2, uid: 1000, findPrlimit: () => "/usr/bin/prlimit", probe: () => undefined };

  it("uses cgroups when they work", () => {
    const cgroups = { kind: "cgroup" } as never;
    const opened = openSessionCaps(cgroupOptions, rlimitOptions, { cgroups: () => ({ cgroups, status: { on: true, kind: "cgroup" } }) });
    expect(opened.confinement).toBe(cgroups);
  });

  it("falls back to rlimits, saying why cgroups were not used", () => {
    const opened = openSessionCaps(cgroupOptions, rlimitOptions, { cgroups: () => ({ status: { on: false, reason: "the sidecar does not run as root" } }) });
    expect(opened.confinement?.kind).toBe("rlimit");
    expect(opened.status).toMatchObject({ on: true, kind: "rlimit", reason: expect.stringContaining("cgroups: the sidecar does not run as root") });
  });

  it("neither: off, with both reasons", () => {
    const opened = openSessionCaps(cgroupOptions, { ...rlimitOptions, probe: () => "no" }, { cgroups: () => ({ status: { on: false, reason: "not root" } }) });
    expect(opened.confinement).toBeUndefined();
    expect(opened.status).toEqual({ on: false, reason: "cgroups: not root; rlimits: prlimit at /usr/bin/prlimit does not work here: no" });
  });
});
