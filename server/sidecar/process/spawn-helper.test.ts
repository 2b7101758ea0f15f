import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { spawnCliProcess, type CliExit, type CliProcessOptions } from "./cli-process";
import { createSpawnHelper, type SpawnHelper } from "./spawn-helper";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const config: CliProcessOptions["config"] = {
  stdinGraceMs: 200,
  termGraceMs: 500,
  killWaitMs: 1_000,
  exitDrainMs: 200,
  maxStderrLineBytes: 4096,
};

/** A child through `helper` as the runner starts one, its output collected. */
async function start(helper: SpawnHelper, script: string) {
  const out: string[] = [];
  const err: string[] = [];
  let exit!: (value: CliExit) => void;
  const exited = new Promise<CliExit>((resolve) => (exit = resolve));
  const child = await spawnCliProcess({
    cliPath: "/bin/sh",
    args: ["-c", script],
    cwd: "/tmp",
    env,
    config,
    spawn: helper.spawn,
    onStdout: (chunk) => out.push(Buffer.from(chunk).toString()),
    onStderrLine: (line) => err.push(line),
    onExit: exit,
  });
  return { child, exited, stdout: () => out.join(""), stderr: err };
}

/** Fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, … */
const statOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
};

describe("spawn helper", () => {
  let helper: SpawnHelper | undefined;
  afterEach(() => helper?.close());

  it("starts a child in the helper and hands its pipes over: output from its first moment, stdin, exit code", async () => {
    helper = createSpawnHelper();
    // the child writes before anything reads: nothing of it may stay behind in the helper
    const run = await start(
      helper,
      'echo early; echo early-err >&2; read line; echo "got $line"; echo "parent $PPID"; exit 3',
    );
    const [, ppid, pgrp] = statOf(run.child.pid);
    expect(Number(ppid)).not.toBe(process.pid);
    expect(Number(pgrp)).toBe(run.child.pid);
    run.child.write("hello\n");
    const exit = await run.exited;
    expect(exit).toMatchObject({ code: 3, signal: null });
    expect(run.stdout()).toBe(`early\ngot hello\nparent ${ppid}\n`);
    expect(run.stderr).toEqual(["early-err"]);
  });

  it("stops a child's whole process group from here, and runs many children at once", async () => {
    helper = createSpawnHelper();
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => start(helper!, `echo ${i}; sleep 30 & sleep 30`)),
    );
    const exits = await Promise.all(runs.map((run) => run.child.stop()));
    for (const [i, run] of runs.entries()) {
      expect(run.stdout()).toBe(`${i}\n`);
      expect(exits[i]!.signal).toBe("SIGTERM");
    }
  });

  it("leaves the child's stdin to the sidecar alone: closing it here is the child's end of input", async () => {
    helper = createSpawnHelper();
    const run = await start(helper, "cat >/dev/null; echo eof");
    const exit = await run.child.stop();
    // ended by its stdin closing (within stdinGraceMs), not by a signal: no copy of the pipe stayed open
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(run.stdout()).toBe("eof\n");
  });

  it("fails a child that cannot start as Node's spawn does", async () => {
    helper = createSpawnHelper();
    const failed = await spawnCliProcess({
      cliPath: "/nonexistent/conduit-no-such-binary",
      args: [],
      cwd: "/tmp",
      env,
      config,
      spawn: helper.spawn,
      onStdout: () => undefined,
      onStderrLine: () => undefined,
      onExit: () => undefined,
    }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Error);
    expect(String((failed as Error).message)).toMatch(/ENOENT/);
  });

  it("reports the exit of a child whose helper died, and spawns here after it is closed", async () => {
    helper = createSpawnHelper();
    const run = await start(helper, "read line; echo bye");
    const helperPid = Number(statOf(run.child.pid)[1]);
    process.kill(helperPid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 300));
    run.child.write("go\n");
    const exit = await run.exited;
    expect(run.stdout()).toBe("bye\n");
    expect(exit.code).toBeNull();
    helper.close();
    const here = await start(helper, "echo $PPID");
    await here.exited;
    expect(Number(here.stdout().trim())).toBe(process.pid);
  });

  it("spawns here, and says so, when the helper cannot be started", async () => {
    const reasons: string[] = [];
    helper = createSpawnHelper({
      execPath: "/nonexistent/conduit-no-node",
      onFallback: (reason) => reasons.push(reason),
    });
    const first = await start(helper, "echo $PPID");
    await first.exited;
    await new Promise((r) => setTimeout(r, 100));
    const second = await start(helper, "echo $PPID");
    await second.exited;
    expect(Number(second.stdout().trim())).toBe(process.pid);
    expect(reasons).toHaveLength(1);
  });
});
