import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type { WorkspaceRoot } from "@/server/workspace-fs/workspace-path";
import { commitWorkspaceFiles, discardWorkspaceChange } from "./commit-files";
import { readGitFileDiff } from "./file-diff";
import { guardOverrides, hasCustomMergeDriver } from "./git-config-guard";
import { parsePorcelainV2, readGitStatus } from "./git-status";
import { createSessionWorktree, listWorktreeChanges, mergeSessionWorktree, readWorktreeFileDiff, removeSessionWorktree, WorktreeConflictError } from "./session-worktree";

const author = { name: "Ada Lovelace", email: "ada@example.test" };
let dir: string;
let root: string;
let ws: WorkspaceRoot;

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Setup", "-c", "user.email=setup@example.test", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, HOME: dir, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  });
}

async function makeRepo(): Promise<void> {
  root = path.join(dir, `ws-${Math.random().toString(36).slice(2)}`);
  await mkdir(root);
  ws = { root };
  git(root, "init", "-q");
  await writeFile(path.join(root, "a.txt"), "one\ntwo\n");
  await writeFile(path.join(root, "b.txt"), "bee\n");
  await mkdir(path.join(root, "src"));
  await writeFile(path.join(root, "src", "c.ts"), "export const c = 1;\n");
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "initial");
}

beforeEach(async () => {
  dir ??= await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-git-")));
  await makeRepo();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("status", () => {
  it("reports branch, staged, unstaged, untracked and renamed paths", async () => {
    await writeFile(path.join(root, "a.txt"), "one\nTWO\n");
    await writeFile(path.join(root, "new file.txt"), "fresh\n");
    git(root, "mv", "b.txt", "bee.txt");
    await writeFile(path.join(root, "src", "c.ts"), "export const c = 2;\n");
    git(root, "add", "src/c.ts");
    const status = await readGitStatus(ws);
    if (!status.repository) throw new Error("expected a repository");
    expect(status.branch).toBe("main");
    expect(status.head).toMatch(/^[0-9a-f]{40}$/);
    const byPath = Object.fromEntries(status.files.map((f) => [f.path, f]));
    expect(byPath["a.txt"]).toMatchObject({ staged: null, unstaged: "modified", untracked: false });
    expect(byPath["src/c.ts"]).toMatchObject({ staged: "modified", unstaged: null });
    expect(byPath["new file.txt"]).toMatchObject({ untracked: true });
    expect(byPath["bee.txt"]).toMatchObject({ staged: "renamed", origPath: "b.txt" });
  });

  it("parses porcelain v2 with a cap", () => {
    const parsed = parsePorcelainV2(["# branch.oid (initial)", "# branch.head (detached)", "? x", "? y"], 1);
    expect(parsed).toEqual({ branch: null, head: null, files: [{ path: "x", staged: null, unstaged: null, untracked: true }], truncated: true });
  });

  it("is not a repository for a plain folder, nor for a folder inside a repository above the workspace", async () => {
    const plain = path.join(dir, `plain-${Math.random().toString(36).slice(2)}`);
    await mkdir(plain);
    expect(await readGitStatus({ root: plain })).toEqual({ repository: false });
    // a workspace that is a subfolder of a repository does not borrow the repository above it
    expect(await readGitStatus({ root: path.join(root, "src") })).toEqual({ repository: false });
  });

  it("leaves a workspace nested inside out of the status and out of reach", async () => {
    const inner = path.join(root, "inner");
    await mkdir(inner);
    await writeFile(path.join(inner, "theirs.txt"), "theirs\n");
    await writeFile(path.join(root, "mine.txt"), "mine\n");
    const outer = { root, excluded: [inner] };
    const status = await readGitStatus(outer);
    if (!status.repository) throw new Error("expected a repository");
    expect(status.files.map((f) => f.path)).toEqual(["mine.txt"]);
    await expect(readGitFileDiff(outer, "inner/theirs.txt")).rejects.toMatchObject({ code: "forbidden" });
    await expect(commitWorkspaceFiles(outer, { paths: ["inner/theirs.txt"], message: "m", author })).rejects.toMatchObject({ code: "forbidden" });
  });

  it("refuses a .git file pointing outside the workspace", async () => {
    const other = path.join(dir, `other-${Math.random().toString(36).slice(2)}`);
    await mkdir(other);
    await writeFile(path.join(other, ".git"), `gitdir: ${path.join(root, ".git")}\n`);
    expect(await readGitStatus({ root: other })).toEqual({ repository: false });
  });
});

describe("diff against HEAD", () => {
  it("gives before and after, absent sides for new and deleted files, binary named", async () => {
    await writeFile(path.join(root, "a.txt"), "one\nTWO\n");
    await rm(path.join(root, "b.txt"));
    await writeFile(path.join(root, "n.txt"), "new\n");
    await writeFile(path.join(root, "bin.dat"), Buffer.from([0, 1, 2]));
    expect(await readGitFileDiff(ws, "a.txt")).toEqual({ path: "a.txt", before: { kind: "text", content: "one\ntwo\n" }, after: { kind: "text", content: "one\nTWO\n" } });
    expect(await readGitFileDiff(ws, "b.txt")).toEqual({ path: "b.txt", before: { kind: "text", content: "bee\n" }, after: { kind: "absent" } });
    expect((await readGitFileDiff(ws, "n.txt")).before).toEqual({ kind: "absent" });
    expect((await readGitFileDiff(ws, "bin.dat")).after).toEqual({ kind: "binary", size: 3 });
  });

  it("refuses .., absolute paths and symlinks out", async () => {
    await writeFile(path.join(dir, "secret.txt"), "secret\n");
    await symlink(path.join(dir, "secret.txt"), path.join(root, "escape.txt"));
    await expect(readGitFileDiff(ws, "../secret.txt")).rejects.toMatchObject({ code: "invalid_payload" });
    await expect(readGitFileDiff(ws, path.join(dir, "secret.txt"))).rejects.toMatchObject({ code: "invalid_payload" });
    await expect(readGitFileDiff(ws, "escape.txt")).rejects.toMatchObject({ code: "forbidden" });
    // through a symlinked folder that leads out: refused before git sees the path
    await symlink(dir, path.join(root, "updir"));
    await expect(commitWorkspaceFiles(ws, { paths: ["updir/secret.txt"], message: "m", author })).rejects.toMatchObject({ code: "forbidden" });
    await expect(discardWorkspaceChange(ws, { path: "updir/secret.txt", confirmDelete: true })).rejects.toMatchObject({ code: "forbidden" });
    await expect(discardWorkspaceChange(ws, { path: "/etc/passwd", confirmDelete: true })).rejects.toMatchObject({ code: "invalid_payload" });
    expect(await readFile(path.join(dir, "secret.txt"), "utf8")).toBe("secret\n");
  });

  it("answers 409 not a repository outside one", async () => {
    const plain = path.join(dir, `plain-${Math.random().toString(36).slice(2)}`);
    await mkdir(plain);
    await writeFile(path.join(plain, "x.txt"), "x");
    await expect(readGitFileDiff({ root: plain }, "x.txt")).rejects.toMatchObject({ code: "conflict", message: "This workspace is not a git repository." });
    await expect(commitWorkspaceFiles({ root: plain }, { paths: ["x.txt"], message: "m", author })).rejects.toMatchObject({ code: "conflict", message: "This workspace is not a git repository." });
  });
});

describe("commit", () => {
  it("commits exactly the selected files as the Conduit user", async () => {
    await writeFile(path.join(root, "a.txt"), "one\nTWO\n");
    await writeFile(path.join(root, "b.txt"), "BEE\n");
    await writeFile(path.join(root, "added.txt"), "added\n");
    await rm(path.join(root, "src", "c.ts"));
    const result = await commitWorkspaceFiles(ws, { paths: ["a.txt", "added.txt", "src/c.ts"], message: "  Fix the letters\n", author });
    expect(result.branch).toBe("main");
    expect(git(root, "rev-parse", "HEAD").trim()).toBe(result.commit);
    expect(git(root, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s").trim()).toBe("Ada Lovelace <ada@example.test>|Ada Lovelace <ada@example.test>|Fix the letters");
    expect(git(root, "show", "--name-status", "--format=", "HEAD").trim().split("\n").sort()).toEqual(["A\tadded.txt", "D\tsrc/c.ts", "M\ta.txt"]);
    // the unselected change is still there, uncommitted
    expect(git(root, "status", "--porcelain").trim()).toBe("M b.txt");
  });

  it("refuses an empty message, an empty selection and an unchanged file", async () => {
    await writeFile(path.join(root, "a.txt"), "changed\n");
    await expect(commitWorkspaceFiles(ws, { paths: ["a.txt"], message: "   ", author })).rejects.toMatchObject({ code: "conflict", message: "Write a commit message first." });
    await expect(commitWorkspaceFiles(ws, { paths: [], message: "m", author })).rejects.toMatchObject({ code: "conflict", message: expect.stringMatching(/Nothing is staged/) });
    await expect(commitWorkspaceFiles(ws, { paths: ["b.txt"], message: "m", author })).rejects.toMatchObject({ code: "conflict", message: expect.stringMatching(/Nothing to commit in b.txt/) });
    await expect(commitWorkspaceFiles(ws, { paths: ["../x"], message: "m", author })).rejects.toMatchObject({ code: "invalid_payload" });
    expect(git(root, "rev-list", "--count", "HEAD").trim()).toBe("1");
  });

  it("never runs the repository's hooks or filter commands", async () => {
    const marker = path.join(dir, `ran-${Math.random().toString(36).slice(2)}`);
    await mkdir(path.join(root, ".git", "hooks"), { recursive: true });
    await writeFile(path.join(root, ".git", "hooks", "pre-commit"), `#!/bin/sh\ntouch ${marker}-hook\n`, { mode: 0o755 });
    git(root, "config", "filter.evil.clean", `touch ${marker}-filter; cat`);
    git(root, "config", "filter.evil.required", "true");
    await writeFile(path.join(root, ".gitattributes"), "*.txt filter=evil\n");
    await writeFile(path.join(root, "a.txt"), "changed\n");
    await commitWorkspaceFiles(ws, { paths: ["a.txt", ".gitattributes"], message: "safe", author });
    await expect(stat(`${marker}-hook`)).rejects.toThrow();
    await expect(stat(`${marker}-filter`)).rejects.toThrow();
    expect(git(root, "show", "HEAD:a.txt")).toBe("changed\n");
  });

  it("guards command-running config keys", () => {
    expect(guardOverrides(["filter.Evil.clean", "diff.x.textconv", "user.name", "filter.lfs.process"])).toEqual([
      "filter.Evil.clean=",
      "filter.Evil.required=false",
      "diff.x.textconv=",
      "filter.lfs.process=",
      "filter.lfs.required=false",
    ]);
    expect(hasCustomMergeDriver(["merge.ours.driver"])).toBe(true);
    expect(hasCustomMergeDriver(["merge.ff"])).toBe(false);
  });
});

describe("discard", () => {
  it("restores a tracked file from HEAD and deletes an untracked one only when confirmed", async () => {
    await writeFile(path.join(root, "a.txt"), "scribble\n");
    git(root, "add", "a.txt");
    expect(await discardWorkspaceChange(ws, { path: "a.txt", confirmDelete: false })).toEqual({ path: "a.txt", action: "restored" });
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("one\ntwo\n");
    await writeFile(path.join(root, "junk.txt"), "junk\n");
    await expect(discardWorkspaceChange(ws, { path: "junk.txt", confirmDelete: false })).rejects.toMatchObject({ code: "conflict", message: expect.stringMatching(/Confirm to delete/) });
    expect(await readFile(path.join(root, "junk.txt"), "utf8")).toBe("junk\n");
    expect(await discardWorkspaceChange(ws, { path: "junk.txt", confirmDelete: true })).toEqual({ path: "junk.txt", action: "deleted" });
    await expect(stat(path.join(root, "junk.txt"))).rejects.toThrow();
    await expect(discardWorkspaceChange(ws, { path: "b.txt", confirmDelete: true })).rejects.toMatchObject({ code: "conflict", message: "b.txt has no change to discard." });
    expect(git(root, "status", "--porcelain").trim()).toBe("");
  });

  it("restores a deleted file", async () => {
    await rm(path.join(root, "src", "c.ts"));
    expect(await discardWorkspaceChange(ws, { path: "src/c.ts", confirmDelete: false })).toEqual({ path: "src/c.ts", action: "restored" });
    expect(await readFile(path.join(root, "src", "c.ts"), "utf8")).toBe("export const c = 1;\n");
  });
});

describe("session worktrees", () => {
  it("lives in an excluded folder on its own branch; its changes merge back", async () => {
    const wt = await createSessionWorktree(ws, "cmabcdef0123456789");
    expect(wt).toEqual({ path: path.join(root, ".conduit", "worktrees", "0123456789"), branch: "conduit/0123456789", baseBranch: "main" });
    // the main checkout does not see the worktree folder
    expect(git(root, "status", "--porcelain").trim()).toBe("");
    await writeFile(path.join(wt.path, "a.txt"), "one\ntwo\nthree\n");
    await writeFile(path.join(wt.path, "fresh.txt"), "fresh\n");
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("one\ntwo\n");
    expect(await listWorktreeChanges(ws, wt)).toEqual([
      { path: "a.txt", status: "modified" },
      { path: "fresh.txt", status: "added" },
    ]);
    expect(await readWorktreeFileDiff(ws, wt, "a.txt")).toEqual({ path: "a.txt", before: { kind: "text", content: "one\ntwo\n" }, after: { kind: "text", content: "one\ntwo\nthree\n" } });
    const merged = await mergeSessionWorktree(ws, wt, { strategy: "merge", who: author, sessionId: "s1" });
    expect(git(root, "rev-parse", "HEAD").trim()).toBe(merged.commit);
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("one\ntwo\nthree\n");
    expect(await readFile(path.join(root, "fresh.txt"), "utf8")).toBe("fresh\n");
    expect(git(root, "log", "-1", "--format=%an|%s").trim()).toBe("Ada Lovelace|Merge conduit/0123456789 (session s1)");
    await removeSessionWorktree(ws, wt);
    await expect(stat(wt.path)).rejects.toThrow();
    expect(git(root, "branch", "--list", "conduit/*").trim()).toBe("");
  });

  it("reports a conflicting merge, aborts it and loses nothing", async () => {
    const wt = await createSessionWorktree(ws, "cmconflict00001");
    await writeFile(path.join(wt.path, "a.txt"), "one\nsession\n");
    await writeFile(path.join(root, "a.txt"), "one\nmain\n");
    git(root, "commit", "-q", "-am", "main moves on");
    const before = git(root, "rev-parse", "HEAD").trim();
    const attempt = mergeSessionWorktree(ws, wt, { strategy: "merge", who: author, sessionId: "s2" });
    await expect(attempt).rejects.toBeInstanceOf(WorktreeConflictError);
    await expect(attempt).rejects.toMatchObject({ conflicts: ["a.txt"] });
    expect(git(root, "rev-parse", "HEAD").trim()).toBe(before);
    expect(git(root, "status", "--porcelain").trim()).toBe("");
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("one\nmain\n");
    // the session's work is kept on its branch
    expect(git(root, "show", `${wt.branch}:a.txt`)).toBe("one\nsession\n");
    const rebase = mergeSessionWorktree(ws, wt, { strategy: "rebase", who: author, sessionId: "s2" });
    await expect(rebase).rejects.toMatchObject({ conflicts: ["a.txt"] });
    expect(await readFile(path.join(wt.path, "a.txt"), "utf8")).toBe("one\nsession\n");
    expect(git(wt.path, "status", "--porcelain").trim()).toBe("");
    await removeSessionWorktree(ws, wt);
  });

  it("rebases and fast-forwards", async () => {
    const wt = await createSessionWorktree(ws, "cmrebase000001");
    await writeFile(path.join(wt.path, "b.txt"), "bee\nsession\n");
    await writeFile(path.join(root, "a.txt"), "one\nmain\n");
    git(root, "commit", "-q", "-am", "main moves on");
    await mergeSessionWorktree(ws, wt, { strategy: "rebase", who: author, sessionId: "s3" });
    expect(git(root, "log", "--format=%s", "-3").trim().split("\n")).toEqual(["Session s3: work in its worktree", "main moves on", "initial"]);
    expect(await readFile(path.join(root, "b.txt"), "utf8")).toBe("bee\nsession\n");
    await removeSessionWorktree(ws, wt);
  });

  it("refuses a repository without a commit", async () => {
    const empty = path.join(dir, `empty-${Math.random().toString(36).slice(2)}`);
    await mkdir(empty);
    git(empty, "init", "-q");
    await expect(createSessionWorktree({ root: empty }, "cmx")).rejects.toMatchObject({ code: "conflict", message: expect.stringMatching(/no commit yet/) });
  });
});
