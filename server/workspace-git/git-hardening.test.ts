// What a workspace's own repository may not make Conduit's git do: run its hooks (in
// `.git/hooks` or wherever `core.hooksPath` points), borrow objects from elsewhere
// (alternates), or stand for another repository (`commondir` in its main `.git`); and where a
// session's worktree is set up, nothing is created before its real path is checked.
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { commitWorkspaceFiles } from "./commit-files";
import { readGitStatus } from "./git-status";
import { findCheckout } from "./open-repository";
import { createSessionWorktree, ensureRealDirectory, mergeSessionWorktree, removeSessionWorktree } from "./session-worktree";

const author = { name: "Ada Lovelace", email: "ada@example.test" };
let dir: string;
let root: string;
let markers: string;

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Setup", "-c", "user.email=setup@example.test", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, HOME: dir, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  });
}

/** Every hook git might run on commit, checkout, merge or a ref update, each touching a marker. */
const hookNames = ["pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout", "pre-merge-commit", "post-merge", "post-rewrite", "reference-transaction", "post-index-change"];

async function writeHooks(into: string, tag: string): Promise<void> {
  await mkdir(into, { recursive: true });
  for (const hook of hookNames) {
    await writeFile(path.join(into, hook), `#!/bin/sh\ntouch ${path.join(markers, `${tag}-${hook}`)}\n`, { mode: 0o755 });
  }
}

beforeAll(async () => {
  dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-githard-")));
  markers = path.join(dir, "markers");
  await mkdir(markers);
});

beforeEach(async () => {
  root = path.join(dir, `ws-${Math.random().toString(36).slice(2)}`);
  await mkdir(root);
  git(root, "init", "-q");
  await writeFile(path.join(root, "a.txt"), "one\n");
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "initial");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("hooks", () => {
  it("runs neither .git/hooks nor a core.hooksPath of the repository's config on commit, worktree and merge", async () => {
    await writeHooks(path.join(root, ".git", "hooks"), "default");
    await writeHooks(path.join(root, ".git", "evil-hooks"), "configured");
    git(root, "config", "core.hooksPath", path.join(root, ".git", "evil-hooks"));
    // the repository's own git does run them (the setup is real)
    git(root, "commit", "-q", "--allow-empty", "-m", "setup runs hooks");
    expect((await readdir(markers)).filter((m) => m.startsWith("configured-")).length).toBeGreaterThan(0);
    await rm(markers, { recursive: true });
    await mkdir(markers);

    await writeFile(path.join(root, "a.txt"), "two\n");
    await commitWorkspaceFiles({ root }, { paths: ["a.txt"], message: "through Conduit", author });
    const wt = await createSessionWorktree({ root }, "cmhooks000001");
    await writeFile(path.join(wt.path, "b.txt"), "bee\n");
    await mergeSessionWorktree({ root }, wt, { strategy: "merge", who: author, sessionId: "s1" });
    const wt2 = await createSessionWorktree({ root }, "cmhooks000002");
    await writeFile(path.join(wt2.path, "c.txt"), "sea\n");
    await mergeSessionWorktree({ root }, wt2, { strategy: "rebase", who: author, sessionId: "s2" });
    await removeSessionWorktree({ root }, wt);
    await removeSessionWorktree({ root }, wt2);

    expect(await readdir(markers)).toEqual([]);
    expect(git(root, "log", "-1", "--format=%s").trim()).toBe("Session s2: work in its worktree");
  });
});

describe("repositories that are not only this workspace's", () => {
  it("refuses objects borrowed through alternates or http-alternates", async () => {
    const other = path.join(dir, `other-${Math.random().toString(36).slice(2)}`);
    await mkdir(other);
    git(other, "init", "-q");
    expect(await findCheckout({ root })).toBeDefined();
    await writeFile(path.join(root, ".git", "objects", "info", "alternates"), `${path.join(other, ".git", "objects")}\n`);
    expect(await findCheckout({ root })).toBeUndefined();
    expect(await readGitStatus({ root })).toEqual({ repository: false });
    await rm(path.join(root, ".git", "objects", "info", "alternates"));
    await writeFile(path.join(root, ".git", "objects", "info", "http-alternates"), "https://example.test/objects\n");
    expect(await findCheckout({ root })).toBeUndefined();
    await rm(path.join(root, ".git", "objects", "info", "http-alternates"));
    expect(await findCheckout({ root })).toBeDefined();
  });

  it("refuses a main .git naming a common directory (its own or another's)", async () => {
    await writeFile(path.join(root, ".git", "commondir"), ".\n");
    expect(await findCheckout({ root })).toBeUndefined();
    expect(await readGitStatus({ root })).toEqual({ repository: false });
  });

  it("still accepts a session's worktree, whose private git directory has a commondir", async () => {
    const wt = await createSessionWorktree({ root }, "cmcommondir01");
    expect((await stat(path.join(root, ".git", "worktrees", path.basename(wt.path), "commondir"))).isFile()).toBe(true);
    expect(await findCheckout({ root }, wt.path)).toMatchObject({ topLevel: wt.path });
    await removeSessionWorktree({ root }, wt);
  });
});

describe("worktree setup", () => {
  it("creates nothing through a .conduit symlink leading out", async () => {
    const outside = path.join(dir, `outside-${Math.random().toString(36).slice(2)}`);
    await mkdir(outside);
    await symlink(outside, path.join(root, ".conduit"));
    await expect(createSessionWorktree({ root }, "cmlink0000001")).rejects.toMatchObject({ code: "forbidden" });
    expect(await readdir(outside)).toEqual([]);
  });

  it("creates nothing through a worktrees symlink, nor through a worktree path that is a symlink", async () => {
    const outside = path.join(dir, `outside-${Math.random().toString(36).slice(2)}`);
    await mkdir(outside);
    await mkdir(path.join(root, ".conduit"));
    await symlink(outside, path.join(root, ".conduit", "worktrees"));
    await expect(createSessionWorktree({ root }, "cmlink0000002")).rejects.toMatchObject({ code: "forbidden" });
    expect(await readdir(outside)).toEqual([]);
    await rm(path.join(root, ".conduit", "worktrees"));
    await mkdir(path.join(root, ".conduit", "worktrees"));
    await symlink(outside, path.join(root, ".conduit", "worktrees", "0000000003"));
    await expect(createSessionWorktree({ root }, "cmlink0000000003")).rejects.toMatchObject({ code: "forbidden" });
    expect(await readdir(outside)).toEqual([]);
  });

  it("creates nothing through a .git/info symlink leading out", async () => {
    const outside = path.join(dir, `outside-${Math.random().toString(36).slice(2)}`);
    await mkdir(outside);
    await rm(path.join(root, ".git", "info"), { recursive: true, force: true });
    await symlink(outside, path.join(root, ".git", "info"));
    await expect(createSessionWorktree({ root }, "cmlink0000004")).rejects.toMatchObject({ code: "forbidden" });
    expect(await readdir(outside)).toEqual([]);
  });

  it("ensureRealDirectory checks each level before making the next", async () => {
    const outside = path.join(dir, `outside-${Math.random().toString(36).slice(2)}`);
    await mkdir(outside);
    await symlink(outside, path.join(root, "link"));
    await expect(ensureRealDirectory(root, root, ["link", "made"], "no")).rejects.toMatchObject({ code: "forbidden", message: "no" });
    expect(await readdir(outside)).toEqual([]);
    await expect(ensureRealDirectory(root, root, [".."], "no")).rejects.toMatchObject({ code: "forbidden" });
    await expect(ensureRealDirectory(root, outside, ["x"], "no")).rejects.toMatchObject({ code: "forbidden" });
    expect(await ensureRealDirectory(root, root, ["x", "y"], "no")).toBe(path.join(root, "x", "y"));
    await writeFile(path.join(root, "file"), "");
    await expect(ensureRealDirectory(root, root, ["file", "z"], "no")).rejects.toMatchObject({ code: "forbidden" });
  });
});
