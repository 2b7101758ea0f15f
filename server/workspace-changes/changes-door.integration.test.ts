// The Changes operations through a real workspace door (bubblewrap, and the same code with the
// sandbox off): a symlink a session plants in the work tree, pointing at a file or a folder outside
// the workspace, is never followed by a snapshot, a diff, a file's sides, a file or hunk revert, or
// a rewind: the outside file's bytes appear in no answer and no shadow object, and it never changes.
// The door also refuses another workspace's repository and a work tree outside its workspace.
import { execFile } from "node:child_process";
import { lstat, mkdir, mkdtemp, readFile, readlink, realpath, rm, stat, symlink, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDoorLauncher, DoorPool, doorPoolDefaults, filesScope, type DoorInput, type DoorOutput, type DoorScope } from "@/server/workspace-agent";

const run = promisify(execFile);
const secret = "OUTSIDE-SECRET-d41d8cd98f00b204e9800998ecf8427e";
const workspaceId = "wschg";

type ChangesOp = "changes.snapshot" | "changes.diff" | "changes.sides" | "changes.previewRewind" | "changes.takeBack";

describe.each(["bwrap", "off"] as const)("changes through the door (sandbox %s): planted symlinks are never followed", (setting) => {
  let base: string;
  let ws: string;
  let outside: string;
  let dataDir: string;
  let pool: DoorPool;
  let scope: DoorScope;
  /** Every answer the door gave, to search for the outside file's bytes. */
  const answers: unknown[] = [];

  const call = async <K extends ChangesOp>(op: K, input: Omit<DoorInput<K>, "repoKey" | "workTree"> & { repoKey?: string; workTree?: string }): Promise<DoorOutput<K>> => {
    const answer = await pool.call(scope, op, { repoKey: workspaceId, workTree: ws, ...input } as DoorInput<K>);
    answers.push(answer);
    return answer;
  };
  const snapshot = async (message = "test") => (await call("changes.snapshot", { message, watch: { readyWaitMs: 5_000 } })).commit;
  const messages = { before: "before", after: "after" };
  const outsideState = async () => ({
    file: await readFile(path.join(outside, "secret.txt"), "utf8"),
    fileTime: (await stat(path.join(outside, "secret.txt"))).mtimeMs,
    inner: await readFile(path.join(outside, "dir", "f.txt"), "utf8"),
    innerTime: (await stat(path.join(outside, "dir", "f.txt"))).mtimeMs,
  });
  let untouched: Awaited<ReturnType<typeof outsideState>>;

  beforeAll(async () => {
    base = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-changes-door-")));
    ws = path.join(base, "ws");
    outside = path.join(base, "outside");
    dataDir = path.join(base, "data");
    await mkdir(path.join(ws, "sub"), { recursive: true });
    await mkdir(path.join(outside, "dir"), { recursive: true });
    await writeFile(path.join(ws, "a.txt"), "hello\n");
    await writeFile(path.join(ws, "sub", "f.txt"), "inside\n");
    await writeFile(path.join(outside, "secret.txt"), `${secret}\n`);
    await writeFile(path.join(outside, "dir", "f.txt"), `${secret} in a folder\n`);
    untouched = await outsideState();
    pool = new DoorPool({ ...doorPoolDefaults, launcher: () => createDoorLauncher({ setting }) });
    expect(await pool.mode()).toBe(setting);
    scope = await filesScope({ id: workspaceId, rootPath: ws }, dataDir);
  });
  afterAll(async () => {
    pool?.close();
    await rm(base, { recursive: true, force: true });
  });

  it("snapshots, diffs and reads the links as links, reverts and rewinds without writing through them", async () => {
    const c0 = await snapshot("baseline");
    await writeFile(path.join(ws, "a.txt"), "hello\nworld\n");
    const c1 = await snapshot("a.txt grew");

    // a session plants links to the outside: a file, a folder, and a folder of the snapshots replaced by one
    await symlink(path.join(outside, "secret.txt"), path.join(ws, "link.txt"));
    await symlink(path.join(outside, "dir"), path.join(ws, "linkdir"));
    await rm(path.join(ws, "sub"), { recursive: true });
    await symlink(path.join(outside, "dir"), path.join(ws, "sub"));
    const c2 = await snapshot("links planted");
    const planted = await call("changes.diff", { from: c1, to: c2 });
    expect(planted.map((f) => [f.path, f.status])).toEqual([
      ["link.txt", "added"],
      ["linkdir", "added"],
      ["sub", "added"],
      ["sub/f.txt", "deleted"],
    ]);
    // a link's side is its target's name, never its bytes; nothing behind a linked folder is there
    expect((await call("changes.sides", { before: c1, after: c2, file: "link.txt" })).after).toEqual({ kind: "text", content: path.join(outside, "secret.txt") });
    expect(await call("changes.sides", { before: c1, after: c2, file: "linkdir/f.txt" })).toEqual({ before: { kind: "absent" }, after: { kind: "absent" } });
    expect((await call("changes.diff", { from: null, to: c2 })).map((f) => f.path)).toEqual(["a.txt", "link.txt", "linkdir", "sub"]);

    // reverting a file under a linked folder: refused (the folder is a link now), nothing written
    await expect(call("changes.takeBack", { messages, action: { type: "file", commit: c1, file: "sub/f.txt" } })).rejects.toMatchObject({ code: "conflict" });
    // removing a file behind a linked folder: the folder leads outside (forbidden), with or
    // without the sandbox (in the door the outside is not there, so the link dangles; it is still
    // named as leading outside, not as missing)
    const behind = call("changes.takeBack", { messages, action: { type: "file", commit: c0, file: "linkdir/f.txt" } });
    await expect(behind).rejects.toMatchObject({ code: "forbidden" });
    // a.txt replaced by a link to the outside file: its hunk is reverted on the link's entry, never its target
    await unlink(path.join(ws, "a.txt"));
    await symlink(path.join(outside, "secret.txt"), path.join(ws, "a.txt"));
    // (a link is not text now: the hunk's lines are not there, so nothing is written)
    await expect(call("changes.takeBack", { messages, action: { type: "hunk", before: c0, after: c1, file: "a.txt", hunk: 0 } })).rejects.toMatchObject({
      code: "conflict",
    });
    expect(await readlink(path.join(ws, "a.txt"))).toBe(path.join(outside, "secret.txt"));
    expect(await outsideState()).toEqual(untouched);
    // reverting the link itself removes the link, not its target
    await call("changes.takeBack", { messages, action: { type: "file", commit: c1, file: "link.txt" } });
    await expect(lstat(path.join(ws, "link.txt"))).rejects.toThrow();
    expect(await outsideState()).toEqual(untouched);

    // a rewind to before the links: the links go, the folder comes back as a folder, the outside stays
    await symlink(path.join(outside, "secret.txt"), path.join(ws, "link.txt"));
    const latest = await snapshot("latest");
    const preview = await call("changes.previewRewind", { message: "preview", watch: { readyWaitMs: 5_000 }, target: c0, latest, promptSeq: 1 });
    expect(preview.conflicts).toEqual([]);
    const rewound = await call("changes.takeBack", {
      messages,
      action: { type: "rewind", target: c0, latest, promptSeq: 1, includeConflicts: true },
    });
    expect(rewound.skipped).toEqual([]);
    expect(await readFile(path.join(ws, "a.txt"), "utf8")).toBe("hello\n");
    expect(await readFile(path.join(ws, "sub", "f.txt"), "utf8")).toBe("inside\n");
    expect((await lstat(path.join(ws, "sub"))).isDirectory()).toBe(true);
    for (const link of ["link.txt", "linkdir"]) await expect(lstat(path.join(ws, link))).rejects.toThrow();
    expect(await call("changes.diff", { from: c0, to: rewound.after })).toEqual([]);
    expect(await outsideState()).toEqual(untouched);

    // reads need no work tree (a discarded session worktree's changes stay readable)
    expect((await call("changes.diff", { from: c0, to: c1, workTree: path.join(base, "gone") })).map((f) => f.path)).toEqual(["a.txt"]);

    // the outside bytes are in no answer and no object of the shadow repository
    expect(JSON.stringify(answers)).not.toContain(secret);
    const gitDir = path.join(scope.shadowDir!, `${workspaceId}.git`);
    const objects = await run("git", ["--git-dir", gitDir, "cat-file", "--batch-all-objects", "--batch"], { maxBuffer: 64 * 1024 * 1024, encoding: "buffer" });
    expect(objects.stdout.length).toBeGreaterThan(0);
    expect(objects.stdout.includes(Buffer.from(secret))).toBe(false);
  });

  it("a door that ended costs its next snapshot a scan, never a change", async () => {
    const first = await snapshot("first");
    expect((await call("changes.snapshot", { message: "again", watch: { readyWaitMs: 5_000 } })).way).toBe("unchanged");
    // the door goes (its watchers and its latest snapshot with it); a file changes meanwhile
    pool.close();
    await writeFile(path.join(ws, "while-gone.txt"), "written with no door\n");
    pool = new DoorPool({ ...doorPoolDefaults, launcher: () => createDoorLauncher({ setting }) });
    const next = await call("changes.snapshot", { message: "after restart", watch: { readyWaitMs: 5_000 } });
    expect(next.way).toBe("scan");
    expect(await call("changes.diff", { from: first, to: next.commit })).toEqual([
      { path: "while-gone.txt", status: "added", insertions: 1, deletions: 0, binary: false, large: false },
    ]);
    await unlink(path.join(ws, "while-gone.txt"));
  });

  it("refuses a work tree that is a link to the outside, or outside the workspace, and another workspace's repository", async () => {
    await symlink(path.join(outside, "dir"), path.join(ws, "escape"));
    expect(await readlink(path.join(ws, "escape"))).toBe(path.join(outside, "dir"));
    // bwrap: the outside is not there at all (not_found); off: it is, and lies outside (forbidden)
    await expect(call("changes.snapshot", { message: "x", workTree: path.join(ws, "escape") })).rejects.toMatchObject({
      code: setting === "bwrap" ? "not_found" : "forbidden",
    });
    await expect(call("changes.snapshot", { message: "x", workTree: outside })).rejects.toMatchObject({ code: setting === "bwrap" ? "not_found" : "forbidden" });
    await expect(call("changes.diff", { from: null, to: "0".repeat(40), repoKey: "otherws" })).rejects.toMatchObject({ code: "forbidden" });
    await expect(call("changes.diff", { from: null, to: "0".repeat(40), repoKey: "../wschg" })).rejects.toMatchObject({ code: "invalid_payload" });
    expect(await outsideState()).toEqual(untouched);
    await unlink(path.join(ws, "escape"));
  });
});
