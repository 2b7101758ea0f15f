// A session's Bash runs inside bubblewrap and writes through a bind mount of the workspace: the
// snapshot watcher (inotify in the workspace's door, itself in a sandbox of its own) still sees
// those writes, so the snapshot right after the sandboxed command exits has them without scanning.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBwrapSandbox, findOnPath } from "@/server/sidecar/process/sandbox";
import { filesScope, workspaceDoor, type DoorInput, type DoorOutput } from "@/server/workspace-agent";

const run = promisify(execFile);

describe("snapshots of writes made inside the sandbox", () => {
  let dir: string;
  let ws: string;
  let configDir: string;
  /** A changes operation on the workspace's shadow repository, in its door. */
  const door = async <K extends "changes.snapshot" | "changes.diff" | "changes.sides">(
    op: K,
    input: Omit<DoorInput<K>, "repoKey" | "workTree">,
  ): Promise<DoorOutput<K>> =>
    workspaceDoor().call(await filesScope({ id: "ws-bwrap", rootPath: ws }, path.join(dir, "data")), op, {
      ...input,
      repoKey: "ws-bwrap",
      workTree: ws,
    } as DoorInput<K>);

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-watch-bwrap-")));
    ws = path.join(dir, "ws");
    configDir = path.join(dir, "config");
    await mkdir(path.join(ws, "src"), { recursive: true });
    await mkdir(configDir);
    await writeFile(path.join(ws, "README.md"), "# ws\n");
    await writeFile(path.join(ws, "src", "gone.txt"), "bye\n");
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("are seen through the bind mount", async () => {
    const bwrapPath = findOnPath("bwrap");
    if (bwrapPath === undefined) throw new Error("bubblewrap is required for this test (apt-get install bubblewrap)");
    const sandbox = createBwrapSandbox({ bwrapPath, cliPath: "/bin/sh" });
    const watch = { readyWaitMs: 5_000 };
    expect((await door("changes.snapshot", { watch, message: "first" })).way).toBe("scan");
    expect((await door("changes.snapshot", { watch, message: "again" })).way).toBe("unchanged");

    const script = "mkdir -p made/in && echo sandboxed > made/in/box.txt && echo more >> README.md && rm src/gone.txt";
    const launch = sandbox.wrap({ file: "/bin/sh", args: ["-c", script], cwd: ws, env: { PATH: "/usr/bin:/bin" } }, { workspaceRoot: ws, configDir });
    // bwrap itself, or the launcher that opens its seccomp filter and execs it
    expect([launch.file, ...launch.args]).toContain(bwrapPath);
    await run(launch.file, [...launch.args], { cwd: launch.cwd, env: launch.env as NodeJS.ProcessEnv });

    const after = await door("changes.snapshot", { watch, message: "after" });
    expect(after.way).toBe("paths");
    const files = await door("changes.diff", { from: null, to: after.commit });
    expect(files.map((f) => f.path)).toEqual(["README.md", "made/in/box.txt"]);
    const sides = (file: string) => door("changes.sides", { before: after.commit, after: after.commit, file });
    expect((await sides("README.md")).after).toEqual({ kind: "text", content: "# ws\nmore\n" });
    expect((await sides("made/in/box.txt")).after).toEqual({ kind: "text", content: "sandboxed\n" });
  });
});
