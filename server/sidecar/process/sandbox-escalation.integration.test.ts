// Stop escalation with the CLI inside bubblewrap (test/fake-cli in a sandbox like a session's):
// the group signals still reach it, a CLI that ignores EOF and SIGTERM still ends, and whatever it
// started — in its group or not — ends with it (PID namespace, die-with-parent).
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeRunner, fakeCliScript, type RunnerKit } from "@/test/fake-cli/runner-kit";
import { until } from "@/test/until";
import { killProcessGroup, type KillGroup } from "./cli-process";
import { createBwrapSandbox, findOnPath } from "./sandbox";

let kit: RunnerKit | undefined;
let configDir: string | undefined;
afterEach(async () => {
  await kit?.close();
  if (configDir) await rm(configDir, { recursive: true, force: true });
  kit = configDir = undefined;
});

/** Host pids whose environment carries `marker`. */
function pidsWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "utf8").includes(marker)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

async function sandboxedFake(mode: "ignore-sigterm" | "grandchild", killGroup: KillGroup, marker: string): Promise<RunnerKit> {
  const bwrapPath = findOnPath("bwrap");
  if (bwrapPath === undefined) throw new Error("bubblewrap is required for this test (apt-get install bubblewrap)");
  configDir = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-sandbox-cfg-")));
  const sandbox = createBwrapSandbox({ bwrapPath, cliPath: process.execPath, readOnly: [path.dirname(fakeCliScript)] });
  return createFakeRunner(mode, {
    runner: { configDir },
    config: { stdinGraceMs: 300, termGraceMs: 3000, killWaitMs: 2000 },
    deps: { sandbox, killGroup, extraEnv: { CONDUIT_SANDBOX_PROBE: marker } },
  });
}

describe("a sandboxed CLI", () => {
  it("that ignores EOF and SIGTERM still ends on the group signals, and leaves nothing behind", async () => {
    const marker = `probe-${randomUUID()}`;
    const sent: string[] = [];
    kit = await sandboxedFake("ignore-sigterm", (pgid, signal) => {
      sent.push(signal);
      killProcessGroup(pgid, signal);
    }, marker);
    await kit.runner.start();
    expect(await kit.turn("hello")).toMatchObject({ type: "result" });
    expect(pidsWith(marker).length).toBeGreaterThan(0);
    const started = Date.now();
    await kit.runner.stop();
    expect(sent[0]).toBe("SIGTERM");
    expect(Date.now() - started).toBeLessThan(5000);
    expect(pidsWith(marker)).toEqual([]);
  });

  it("takes its grandchild along when it stops", async () => {
    const marker = `probe-${randomUUID()}`;
    kit = await sandboxedFake("grandchild", killProcessGroup, marker);
    await kit.runner.start();
    await kit.turn("hello");
    // The CLI and its `sleep 300`, both carrying the marker.
    expect(pidsWith(marker).length).toBeGreaterThanOrEqual(2);
    await kit.runner.stop();
    // The sandbox's PID namespace ends with its first process; the kernel kills the rest at once
    // but reaps them asynchronously, so a loaded machine can still list one for a moment.
    await until(() => pidsWith(marker).length === 0, 5_000, "the sandbox's processes gone", 50).catch(() => undefined);
    expect(pidsWith(marker)).toEqual([]);
  });
});
