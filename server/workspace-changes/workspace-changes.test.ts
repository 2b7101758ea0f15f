import { mkdtemp, readFile, rm, symlink, writeFile, mkdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commitsOfScope, rewindTarget, sessionCommits, type ScopeStep } from "./change-scope";
import { coveringPaths, ShadowRepo } from "./shadow-repo";
import { hunksOf, planRewind, restoreFile, revertHunk, sideOf } from "./take-back";

const step = (over: Partial<ScopeStep>): ScopeStep => ({
  id: "s",
  kind: "turn",
  promptSeq: 1,
  beforeCommit: "b",
  afterCommit: "a",
  status: "ok",
  ...over,
});

describe("change scopes", () => {
  const steps = [
    step({ id: "t1", promptSeq: 3, beforeCommit: "c0", afterCommit: "c1" }),
    step({ id: "t2", promptSeq: 9, beforeCommit: "c1", afterCommit: "c2" }),
    step({ id: "r", kind: "revert", promptSeq: null, beforeCommit: "c2", afterCommit: "c3" }),
    step({ id: "t3", promptSeq: 15, beforeCommit: null, afterCommit: "c4", status: "unknown" }),
  ];
  it("a turn is its own pair; the session is the first before to the latest after", () => {
    expect(commitsOfScope(steps, { turn: "t2" })).toEqual({ before: "c1", after: "c2" });
    expect(commitsOfScope(steps, { session: true })).toEqual({ before: "c0", after: "c4" });
    expect(sessionCommits([])).toBeUndefined();
    expect(() => commitsOfScope(steps, { turn: "t3" })).toThrow(/unknown/);
    expect(() => commitsOfScope(steps, { turn: "nope" })).toThrow(/no such turn/);
  });
  it("rewinds to the before of the prompt's turn, or of the turn it joined, never further back past an unknown one", () => {
    expect(rewindTarget(steps, 3)).toBe("c0");
    expect(rewindTarget(steps, 9)).toBe("c1");
    // prompt 10 joined the turn of prompt 9
    expect(rewindTarget(steps, 10)).toBe("c1");
    expect(() => rewindTarget(steps, 15)).toThrow(/no snapshot/);
    expect(() => rewindTarget(steps, 1)).toThrow(/no snapshot/);
  });
});

describe("covering paths", () => {
  it("keeps a folder and drops what lies under it, not its look-alike siblings", () => {
    expect(coveringPaths(["a/b/c.txt", "a", "a-b/x", "a.txt", "b/c", "b/c/d", "b/cd", "a"])).toEqual(["a", "a-b/x", "a.txt", "b/c", "b/cd"]);
    expect(coveringPaths([])).toEqual([]);
  });
});

describe("hunks", () => {
  it("lists the hunks of a text change and none for binary sides", () => {
    const before = sideOf(Buffer.from("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"));
    const after = sideOf(Buffer.from("a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\n"));
    expect(hunksOf(before, after).hunks).toHaveLength(2);
    expect(hunksOf(before, sideOf(Buffer.from([0, 1, 2]))).hunks).toEqual([]);
  });
});

describe("the shadow repository and take-backs", () => {
  let dir: string;
  let ws: string;
  let repo: ShadowRepo;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "conduit-changes-"));
    ws = path.join(dir, "ws");
    await mkdir(ws);
    repo = new ShadowRepo(path.join(dir, "shadow.git"), ws);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("snapshots only what changed, skipping .git, node_modules and ignored paths", async () => {
    await writeFile(path.join(ws, "a.txt"), "one\n");
    await writeFile(path.join(ws, ".gitignore"), "*.log\n");
    await mkdir(path.join(ws, ".git"));
    await writeFile(path.join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
    await mkdir(path.join(ws, "node_modules"));
    await writeFile(path.join(ws, "node_modules", "x.js"), "x");
    await writeFile(path.join(ws, "debug.log"), "noise");
    const first = await repo.snapshot();
    expect(await repo.snapshot()).toBe(first);
    expect((await repo.diff(null, first)).map((f) => f.path)).toEqual([".gitignore", "a.txt"]);
    expect(await repo.diff(first, first)).toEqual([]);
    // ...answered without git: a commit the repository does not have would make git fail
    expect(await repo.diff("0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567")).toEqual([]);
    // the workspace's own .git is untouched
    expect(await readFile(path.join(ws, ".git", "HEAD"), "utf8")).toBe("ref: refs/heads/main\n");
    await writeFile(path.join(ws, "big.txt"), "x".repeat(1024 * 1024 + 10));
    const second = await repo.snapshot();
    expect(await repo.diff(first, second)).toEqual([{ path: "big.txt", status: "added", insertions: 0, deletions: 0, binary: false, large: true }]);
  });

  it("sees every kind of change after a snapshot that found nothing (the status fast path)", async () => {
    await mkdir(path.join(ws, "src", "deep"), { recursive: true });
    await writeFile(path.join(ws, "src", "deep", "a.ts"), "export const a = 1;\n");
    await writeFile(path.join(ws, "b.txt"), "bee\n");
    const base = await repo.snapshot();
    expect(await repo.snapshot()).toBe(base);
    // a new file in an existing folder (the untracked cache must notice the folder changed)
    await writeFile(path.join(ws, "src", "deep", "new.ts"), "export const n = 2;\n");
    const added = await repo.snapshot();
    expect(await repo.diff(base, added)).toMatchObject([{ path: "src/deep/new.ts", status: "added" }]);
    expect(await repo.snapshot()).toBe(added);
    // same size, same second: racy-git content check
    await writeFile(path.join(ws, "src", "deep", "a.ts"), "export const a = 9;\n");
    const modified = await repo.snapshot();
    expect(await repo.diff(added, modified)).toMatchObject([{ path: "src/deep/a.ts", status: "modified" }]);
    await rm(path.join(ws, "b.txt"));
    const deleted = await repo.snapshot();
    expect(await repo.diff(modified, deleted)).toMatchObject([{ path: "b.txt", status: "deleted" }]);
    // an ignored file stays out, on the fast path too
    await writeFile(path.join(ws, ".gitignore"), "*.log\n");
    const ignoreRule = await repo.snapshot();
    await writeFile(path.join(ws, "noise.log"), "x");
    expect(await repo.snapshot()).toBe(ignoreRule);
  });

  it("reverts a hunk on text that changed elsewhere, and refuses one whose lines changed", async () => {
    const before = sideOf(Buffer.from("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"));
    const after = sideOf(Buffer.from("a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\n"));
    await writeFile(path.join(ws, "f.txt"), "a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\nk\n");
    await revertHunk({ root: ws }, "f.txt", before, after, 1);
    expect(await readFile(path.join(ws, "f.txt"), "utf8")).toBe("a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\n");
    await writeFile(path.join(ws, "f.txt"), "a\nX\nc\nd\ne\nf\ng\nh\ni\nj\n");
    await expect(revertHunk({ root: ws }, "f.txt", before, after, 0)).rejects.toThrow(/changed where this hunk is/);
    expect(await readFile(path.join(ws, "f.txt"), "utf8")).toBe("a\nX\nc\nd\ne\nf\ng\nh\ni\nj\n");
  });

  it("restores files through neither symlinks out nor `..`, and plans a rewind with conflicts", async () => {
    await writeFile(path.join(ws, "keep.txt"), "keep\n");
    await mkdir(path.join(ws, "sub"));
    await writeFile(path.join(ws, "sub", "f.txt"), "inside\n");
    const c0 = await repo.snapshot();
    await rm(path.join(ws, "sub"), { recursive: true });
    await writeFile(path.join(ws, "keep.txt"), "changed\n");
    await writeFile(path.join(ws, "new.txt"), "new\n");
    const latest = await repo.snapshot();
    await writeFile(path.join(ws, "new.txt"), "hand\n");
    const current = await repo.snapshot();
    const plan = await planRewind(repo, { target: c0, current, latest }, 1);
    expect(plan.files.map((f) => [f.path, f.status])).toEqual([
      ["keep.txt", "modified"],
      ["new.txt", "deleted"],
      ["sub/f.txt", "added"],
    ]);
    expect(plan.conflicts).toEqual(["new.txt"]);
    await expect(restoreFile(repo, { root: ws }, c0, "../outside.txt")).rejects.toThrow(/`\.\.`/);
    const outside = path.join(dir, "outside");
    await mkdir(outside);
    await symlink(outside, path.join(ws, "sub"));
    await writeFile(path.join(outside, "f.txt"), "secret\n");
    // a folder that became a symlink out of the workspace is not written through
    await expect(restoreFile(repo, { root: ws }, c0, "sub/f.txt")).rejects.toThrow();
    expect(await readFile(path.join(outside, "f.txt"), "utf8")).toBe("secret\n");
    expect(await restoreFile(repo, { root: ws }, c0, "keep.txt")).toBe(true);
    expect(await readFile(path.join(ws, "keep.txt"), "utf8")).toBe("keep\n");
    expect(await restoreFile(repo, { root: ws }, c0, "new.txt")).toBe(true);
    await expect(readFile(path.join(ws, "new.txt"))).rejects.toThrow();
  });
});
