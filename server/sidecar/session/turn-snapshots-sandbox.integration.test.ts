// A session's Bash runs inside bubblewrap and writes through a bind mount of the workspace: the
// snapshot watcher (inotify on the host's folders) still sees those writes, so the snapshot
// right after the sandboxed command exits has them without scanning.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WorkTreeWatchers } from "@/server/workspace-changes/change-watcher";
import { ShadowRepo } from "@/server/workspace-changes/shadow-repo";
import { createBwrapSandbox, findOnPath } from "@/server/sidecar/process/sandbox";

const run = promisify(execFile);

describe("snapshots of writes made inside the sandbox", () => {
  let dir: string;
  let ws: string;
  let configDir: string;
  let watchers: WorkTreeWatchers;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-watch-bwrap-")));
    ws = path.join(dir, "ws");
    configDir = path.join(dir, "config");
    await mkdir(path.join(ws, "src"), { recursive: true });
    await mkdir(configDir);
    await writeFile(path.join(ws, "README.md"), "# ws\n");
    await writeFile(path.join(ws, "src", "gone.txt"), "bye\n");
    watchers = new WorkTreeWatchers({ readyWaitMs: 5_000 });
  });
  afterEach(async () => {
    watchers.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("are seen through the bind mount", async () => {
    const bwrapPath = findOnPath("bwrap");
    if (bwrapPath === undefined) throw new Error("bubblewrap is required for this test (apt-get install bubblewrap)");
    const sandbox = createBwrapSandbox({ bwrapPath, cliPath: "/bin/sh" });
    const repo = new ShadowRepo(path.join(dir, "shadow.git"), ws, false, watchers);
    await repo.snapshot();
    expect(repo.lastWay).toBe("scan");
    await repo.snapshot();
    expect(repo.lastWay).toBe("unchanged");

    const script = "mkdir -p made/in && echo sandboxed > made/in/box.txt && echo more >> README.md && rm src/gone.txt";
    const launch = sandbox.wrap({ file: "/bin/sh", args: ["-c", script], cwd: ws, env: { PATH: "/usr/bin:/bin" } }, { workspaceRoot: ws, configDir });
    expect(launch.file).toBe(bwrapPath);
    await run(launch.file, [...launch.args], { cwd: launch.cwd, env: launch.env as NodeJS.ProcessEnv });

    const after = await repo.snapshot();
    expect(repo.lastWay).toBe("paths");
    const files = (await repo.git(["ls-tree", "-r", "-z", "--name-only", after])).stdout.toString().split("\0").filter(Boolean);
    expect(files).toEqual(["README.md", "made/in/box.txt"]);
    expect((await repo.read(after, "README.md"))?.toString()).toBe("# ws\nmore\n");
    expect((await repo.read(after, "made/in/box.txt"))?.toString()).toBe("sandboxed\n");
  });
});
