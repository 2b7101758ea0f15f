// Reaping against the real process table: an orphaned claude child (its own group, stdin still
// open, as an earlier sidecar would leave it) is ended; an unrelated process with a recorded pid is not.
import { spawn, type ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { startCliEnv, type CliEnv } from "@/test/cli-env";
import { streamJsonFlags } from "./build-cli-args";
import { killProcessGroup } from "./cli-process";
import { procProcessTable, reapOrphans } from "./reap-orphans";

let cliEnv: CliEnv | undefined;
const started: ChildProcess[] = [];

afterEach(async () => {
  for (const child of started.splice(0)) if (child.pid !== undefined) killProcessGroup(child.pid, "SIGKILL");
  await cliEnv?.close();
  cliEnv = undefined;
});

function startDetached(file: string, args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(file, args, {
    env: env as NodeJS.ProcessEnv,
    cwd: cliEnv!.cwd,
    stdio: ["pipe", "ignore", "ignore"],
    detached: true,
  });
  started.push(child);
  return child;
}

describe("reapOrphans", () => {
  it("ends a left-behind claude group and leaves an unrelated process alone", async () => {
    cliEnv = await startCliEnv();
    const orphan = startDetached(cliEnv.cliPath, [...streamJsonFlags], cliEnv.env);
    const bystander = startDetached("sleep", ["30"], cliEnv.env);
    const orphanExit = new Promise((resolve) => orphan.once("exit", (code, signal) => resolve(signal ?? code)));
    await expect.poll(() => procProcessTable.cmdline(orphan.pid!)?.includes("stream-json") ?? false).toBe(true);

    const report = await reapOrphans([orphan.pid!, bystander.pid!], { termGraceMs: 2000 });
    expect(report).toEqual({
      reaped: [orphan.pid],
      survived: [],
      skipped: [{ pid: bystander.pid, reason: "not-claude" }],
    });
    await expect(orphanExit).resolves.toBe("SIGTERM");
    expect(procProcessTable.isAlive(bystander.pid!)).toBe(true);
  });
});
