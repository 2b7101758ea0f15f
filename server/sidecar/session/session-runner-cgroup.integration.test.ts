// The runner with per-session cgroups (session-cgroup.ts) on the real kernel: the child runs
// inside, a stop takes a setsid grandchild along, and an OOM kill at the cap is reported with the
// cap in the exit event instead of as a plain crash. Skipped where cgroups cannot be created.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { findCgroupLayout, openSessionCgroups, type SessionCgroups } from "@/server/sidecar/process/session-cgroup";
import { createFakeRunner, type RunnerKit } from "@/test/fake-cli/runner-kit";
import { until } from "@/test/until";

const usable = !("problem" in findCgroupLayout("probe"));
let kit: RunnerKit | undefined;
let cgroups: SessionCgroups | undefined;

afterEach(async () => {
  await kit?.close();
  kit = undefined;
  await cgroups?.cleanLeftovers();
  await cgroups?.close();
  cgroups = undefined;
});

function open(memoryMb: number): SessionCgroups {
  const opened = openSessionCgroups({ sidecarId: `test-${randomUUID().slice(0, 8)}`, caps: { memoryMb, pidsMax: 64 } });
  if (opened.cgroups === undefined) throw new Error(String(opened.status.reason));
  return opened.cgroups;
}

const alive = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return false;
  }
};

// Skipped where this process cannot create cgroups (not root, no cgroup v1 memory/pids/freezer, v2 without
// delegation): the kernel feature is missing, not the code. CI runs as root on cgroup v1, where these run.
describe.skipIf(!usable)("session runner in cgroups", () => {
  it("runs the child inside its cgroup and a stop leaves no setsid grandchild behind", async () => {
    cgroups = open(512);
    kit = await createFakeRunner("setsid-grandchild", { deps: { cgroups } });
    await kit.turn("hello");
    const line = kit.events.find((e) => e.type === "stderr" && e.text.startsWith("fake-cli setsid grandchild"));
    const grandchild = Number(line?.type === "stderr" ? line.text.split(" ").at(-1) : NaN);
    expect(alive(grandchild)).toBe(true);
    const [pid] = kit.pids();
    expect(readFileSync(`/proc/${pid}/cgroup`, "utf8")).toMatch(/memory:.*\/conduit\/test-[^/]+\/session-[^/]+-1$/m);
    await kit.runner.stop();
    await until(() => !alive(grandchild), 5_000, "the grandchild gone");
  });

  it("reports an OOM kill at the cap with the cap, not as a generic crash", async () => {
    cgroups = open(100);
    kit = await createFakeRunner("hog", { deps: { cgroups }, config: { restartBaseMs: 60_000 } });
    await kit.turn("hog 0");
    const from = kit.events.length;
    await kit.runner.prompt({ uuid: randomUUID(), text: "hog 300" });
    const exited = await kit.waitFor((e) => e.type === "process" && e.phase === "exited", { from, timeoutMs: 30_000 });
    expect(exited).toMatchObject({ signal: "SIGKILL", expected: false, reason: expect.stringContaining("memory cap of 100 MB") });
  });
});
