// The caps' rlimit fallback (session-rlimit.ts) on a real spawn: the child runs under prlimit's
// limits (memory per process, processes of the user, file size), soft and hard alike.
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { findOnPath } from "@/server/sidecar/process/sandbox";
import { openSessionRlimits } from "@/server/sidecar/process/session-rlimit";
import { createFakeRunner, type RunnerKit } from "@/test/fake-cli/runner-kit";

let kit: RunnerKit | undefined;
afterEach(async () => {
  await kit?.close();
  kit = undefined;
});

/** `Max <name>` of /proc/<pid>/limits: [soft, hard]. */
function limit(pid: number, name: string): [string, string] {
  const line = readFileSync(`/proc/${pid}/limits`, "utf8").split("\n").find((l) => l.startsWith(`Max ${name}`)) ?? "";
  const fields = line.slice(`Max ${name}`.length).trim().split(/\s+/);
  return [fields[0] ?? "", fields[1] ?? ""];
}

// Skipped only without util-linux's prlimit (the fallback itself then reports no caps); .ci/run installs it.
describe.skipIf(findOnPath("prlimit") === undefined)("session runner under the rlimit fallback", () => {
  it("starts the child under the limits", async () => {
    const opened = openSessionRlimits({ caps: { memoryMb: 1536, pidsMax: 100 }, fileSizeMb: 64, sessionMax: 3, uid: 1000 });
    expect(opened.status).toMatchObject({ on: true, kind: "rlimit" });
    kit = await createFakeRunner("behave", { deps: { cgroups: opened.confinement } });
    await kit.turn("hello");
    const [pid] = kit.pids();
    expect(limit(pid!, "data size")).toEqual([String(1536 * 1024 * 1024), String(1536 * 1024 * 1024)]);
    expect(limit(pid!, "processes")).toEqual(["300", "300"]);
    expect(limit(pid!, "file size")).toEqual([String(64 * 1024 * 1024), String(64 * 1024 * 1024)]);
  });
});
