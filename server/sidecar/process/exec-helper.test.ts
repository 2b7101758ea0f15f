import { afterEach, describe, expect, it } from "vitest";
import { createExecHelper, type ExecHelper } from "./exec-helper";
import { execFileHere } from "@/server/workspace-fs/exec-file";

const env = { NODE_ENV: "test" as const, PATH: process.env.PATH ?? "/usr/bin:/bin" };

describe("exec helper", () => {
  let helper: ExecHelper | undefined;
  afterEach(() => helper?.close());

  it("runs a child in the helper process and brings back its output, stdin given", async () => {
    helper = createExecHelper();
    const viaHelper = await helper.run("git", ["hash-object", "--stdin"], { env }, "hello\n");
    const here = await execFileHere("git", ["hash-object", "--stdin"], { env }, "hello\n");
    expect(viaHelper.error).toBeNull();
    expect(Buffer.isBuffer(viaHelper.stdout)).toBe(true);
    expect(viaHelper.stdout.toString().trim()).toBe("ce013625030ba8dba906f756967f9e9ca394464a");
    expect(viaHelper.stdout.equals(here.stdout)).toBe(true);
    // the child ran in the helper, not in this process
    const parent = await helper.run("sh", ["-c", "echo $PPID"], { env });
    expect(Number(parent.stdout.toString().trim())).not.toBe(process.pid);
  });

  it("reports failures as execFile does: the exit code, no such file, too much output, a timeout", async () => {
    helper = createExecHelper();
    const exit = await helper.run("sh", ["-c", "echo oops >&2; exit 3"], { env });
    expect(exit.error?.code).toBe(3);
    expect(exit.stderr.toString()).toBe("oops\n");
    const missing = await helper.run("/nonexistent/conduit-no-such-binary", [], { env });
    expect(missing.error?.code).toBe("ENOENT");
    const big = await helper.run("sh", ["-c", "head -c 5000 /dev/zero"], { env, maxBuffer: 1000 });
    expect(big.error?.code).toBe("ERR_CHILD_PROCESS_STDIO_MAXBUFFER");
    const slow = await helper.run("sleep", ["5"], { env, timeout: 100, killSignal: "SIGKILL" });
    expect(slow.error?.killed).toBe(true);
    expect(slow.error?.signal).toBe("SIGKILL");
  });

  it("answers many requests at once, each with its own output", async () => {
    helper = createExecHelper();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => helper!.run("sh", ["-c", `echo ${i}`], { env })));
    expect(results.map((r) => r.stdout.toString().trim())).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
  });

  it("fails the requests in flight when it is stopped, and spawns here once closed", async () => {
    helper = createExecHelper();
    const waiting = helper.run("sleep", ["5"], { env });
    await new Promise((r) => setTimeout(r, 200));
    helper.close();
    const failed = await waiting;
    expect(failed.error?.message).toMatch(/exec helper was stopped/);
    const after = await helper.run("sh", ["-c", "echo $PPID"], { env });
    expect(Number(after.stdout.toString().trim())).toBe(process.pid);
  });

  it("spawns here, and says so once, when the helper cannot be started", async () => {
    const reasons: string[] = [];
    helper = createExecHelper({ execPath: "/nonexistent/conduit-no-node", onFallback: (reason) => reasons.push(reason) });
    const [first, second] = await Promise.all([
      helper.run("sh", ["-c", "echo $PPID"], { env }),
      helper.run("sh", ["-c", "echo $PPID"], { env }),
    ]);
    expect(first.error).toBeNull();
    expect(Number(first.stdout.toString().trim())).toBe(process.pid);
    expect(Number(second.stdout.toString().trim())).toBe(process.pid);
    const later = await helper.run("sh", ["-c", "echo $PPID"], { env });
    expect(Number(later.stdout.toString().trim())).toBe(process.pid);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/ENOENT/);
  });
});
