// A repository whose own `.git/config` names programs (filter, textconv, external diff and diff
// drivers, fsmonitor, hooks, editor, pager, signing) that write a marker OUTSIDE the workspace:
// the git routes (status, diff, commit, discard, a session worktree's changes, diff, merge and
// removal) run through the real workspace door and the marker never appears on the host. Run
// with the door sandboxed (CONDUIT_SANDBOX=auto: bubblewrap when it works — the door's /tmp is
// its own) and unsandboxed (`off`: only the git layer's own guard stands, so this proves it).
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "@/server/db/client";
import { createDoorLauncher, doorPoolDefaults, DoorPool, gitScope, setWorkspaceDoor, workspaceDoor } from "@/server/workspace-agent";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { setupGit } from "@/test/setup-git";
import {
  commitGit,
  discardGit,
  discardSessionWorktree,
  getGitDiff,
  getGitStatus,
  getSessionWorktree,
  getSessionWorktreeDiff,
  isGitWorkspace,
  mergeSessionWorktreeBack,
} from "./workspace-git";

const savedUrl = process.env.DATABASE_URL;
let f: SessionFixtures;
/** On the host, outside every workspace: where the repository's programs would leave their marks. */
let markers: string;

beforeAll(async () => {
  f = await createSessionFixtures({ slug: "git-hardening" });
  await f.db.$disconnect();
  process.env.DATABASE_URL = f.url;
  markers = await mkdtemp("/tmp/conduit-git-marker-");
});

afterAll(async () => {
  workspaceDoor().close();
  setWorkspaceDoor(undefined);
  await closeDb();
  if (savedUrl === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = savedUrl;
  await rm(markers, { recursive: true, force: true });
  await f.close();
});

const actor = () => ({ id: f.owner.id, name: f.owner.name, email: "olga@example.test" });

/** A shell command that leaves the marker `name` (then passes its input through, as a filter must). */
const mark = (name: string) => `touch ${path.join(markers, name)}; cat`;

/** Makes a repository, commits its first files, then gives its config every command-running key. */
async function hostileRepository(root: string): Promise<void> {
  const git = (...args: string[]) => setupGit(root, ...args);
  await mkdir(root, { recursive: true });
  await writeFile(path.join(root, "hello.txt"), "hello\n");
  await writeFile(path.join(root, "other.txt"), "other\n");
  await writeFile(path.join(root, ".gitattributes"), "* filter=evil diff=evil\n");
  git("init", "-q");
  git("add", "-A");
  git("commit", "-q", "-m", "initial");
  const script = async (name: string) => {
    const at = path.join(root, ".git", `${name}.sh`);
    await writeFile(at, `#!/bin/sh\n${mark(name)} >/dev/null </dev/null\n`);
    await chmod(at, 0o755);
    return at;
  };
  for (const dir of ["hooks", "evil-hooks"]) {
    await mkdir(path.join(root, ".git", dir), { recursive: true });
    for (const hook of ["pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout", "pre-merge-commit", "post-merge", "reference-transaction", "post-index-change"]) {
      await writeFile(path.join(root, ".git", dir, hook), `#!/bin/sh\ntouch ${path.join(markers, `${dir}-${hook}`)}\n`, { mode: 0o755 });
    }
  }
  const settings: [string, string][] = [
    ["filter.evil.clean", mark("filter-clean")],
    ["filter.evil.smudge", mark("filter-smudge")],
    ["filter.evil.required", "true"],
    ["diff.evil.textconv", mark("textconv")],
    ["diff.evil.command", await script("diff-command")],
    ["diff.external", await script("diff-external")],
    ["core.hooksPath", path.join(root, ".git", "evil-hooks")],
    ["core.editor", await script("editor")],
    ["sequence.editor", await script("sequence-editor")],
    ["core.pager", await script("pager")],
    ["commit.gpgSign", "true"],
    ["gpg.program", await script("gpg")],
  ];
  for (const [key, value] of settings) git("config", key, value);
  // the setup is live: the repository's own git runs what its config names
  git("cat-file", "--textconv", "HEAD:hello.txt");
  git("-c", "commit.gpgSign=false", "commit", "-q", "--allow-empty", "-m", "live");
  expect(await readdir(markers)).toEqual(expect.arrayContaining(["textconv", "filter-smudge", "evil-hooks-pre-commit", "evil-hooks-post-commit"]));
  // and the two that would break the setup's own git (a process filter, an fsmonitor hook)
  git("config", "filter.evil.process", await script("filter-process"));
  git("config", "core.fsmonitor", await script("fsmonitor"));
  await rm(markers, { recursive: true });
  await mkdir(markers);
}

describe.each(["auto", "off"] as const)("a repository's own programs, door %s", (setting) => {
  let slug: string;
  let root: string;
  let workspaceId: string;

  beforeAll(async () => {
    workspaceDoor().close();
    setWorkspaceDoor(new DoorPool({ ...doorPoolDefaults, launcher: () => createDoorLauncher({ setting }) }));
    slug = `hostile-${setting}`;
    root = path.join(f.dir, slug);
    await hostileRepository(root);
    const ws = await getDb().workspace.create({ data: { name: slug, slug, rootPath: root }, select: { id: true } });
    workspaceId = ws.id;
    await getDb().membership.create({ data: { workspaceId, userId: f.owner.id, role: "owner" } });
  });

  it("never run through the git routes; the routes still work", async () => {
    expect(await workspaceDoor().mode()).toMatch(setting === "off" ? /^off$/ : /^(bwrap|off)$/);
    expect(await isGitWorkspace(f.owner.id, slug)).toBe(true);
    await writeFile(path.join(root, "hello.txt"), "hello, world\n");
    await writeFile(path.join(root, "scratch.txt"), "scratch\n");
    expect(await getGitStatus(f.owner.id, slug)).toMatchObject({
      repository: true,
      branch: "main",
      files: [
        { path: "hello.txt", unstaged: "modified" },
        { path: "scratch.txt", untracked: true },
      ],
    });
    expect(await getGitDiff(f.owner.id, slug, { path: "hello.txt" })).toEqual({
      path: "hello.txt",
      before: { kind: "text", content: "hello\n" },
      after: { kind: "text", content: "hello, world\n" },
    });
    const made = await commitGit(actor(), slug, { paths: ["hello.txt"], message: "Greet the world" });
    expect(setupGit(root, "log", "-1", "--format=%H|%s|%G?").trim()).toBe(`${made.commit}|Greet the world|N`);
    expect(setupGit(root, "show", "HEAD:hello.txt")).toBe("hello, world\n");
    expect(await discardGit(actor(), slug, { path: "scratch.txt", confirmDelete: true })).toEqual({ path: "scratch.txt", action: "deleted" });
    await writeFile(path.join(root, "other.txt"), "changed\n");
    expect(await discardGit(actor(), slug, { path: "other.txt", confirmDelete: false })).toEqual({ path: "other.txt", action: "restored" });
    expect(await readFile(path.join(root, "other.txt"), "utf8")).toBe("other\n");
    expect(await readdir(markers)).toEqual([]);
  });

  it("never run through a session worktree's create, changes, diff, merge and removal", async () => {
    const scope = await gitScope({ id: workspaceId, rootPath: root, excluded: [] });
    for (const strategy of ["merge", "rebase"] as const) {
      const session = await getDb().session.create({ data: { workspaceId, createdById: f.owner.id, status: "stopped" }, select: { id: true } });
      const wt = await workspaceDoor().call(scope, "git.worktree.create", { sessionId: session.id });
      await getDb().session.update({ where: { id: session.id }, data: { worktreePath: wt.path, worktreeBranch: wt.branch, baseBranch: wt.baseBranch } });
      await writeFile(path.join(wt.path, `${strategy}.txt`), `${strategy}\n`);
      await writeFile(path.join(wt.path, "other.txt"), `other, ${strategy}\n`);
      expect((await getSessionWorktree(f.owner.id, slug, session.id))?.changes).toEqual(
        [
          { path: `${strategy}.txt`, status: "added" },
          { path: "other.txt", status: "modified" },
        ].sort((a, b) => a.path.localeCompare(b.path)),
      );
      expect(await getSessionWorktreeDiff(f.owner.id, slug, session.id, "other.txt")).toMatchObject({ after: { kind: "text", content: `other, ${strategy}\n` } });
      // the main checkout moves on meanwhile
      await writeFile(path.join(root, `main-${strategy}.txt`), "main\n");
      await commitGit(actor(), slug, { paths: [`main-${strategy}.txt`], message: `main moves on (${strategy})` });
      const merged = await mergeSessionWorktreeBack(actor(), slug, session.id, { strategy });
      expect(merged.strategy).toBe(strategy);
      expect(await readFile(path.join(root, "other.txt"), "utf8")).toBe(`other, ${strategy}\n`);
      await discardSessionWorktree(actor(), slug, session.id);
    }
    expect(setupGit(root, "branch", "--list", "conduit/*").trim()).toBe("");
    expect(await readdir(markers)).toEqual([]);
  });

  it("a custom merge driver refuses the merge, running nothing", async () => {
    const session = await getDb().session.create({ data: { workspaceId, createdById: f.owner.id, status: "stopped" }, select: { id: true } });
    const wt = await workspaceDoor().call(await gitScope({ id: workspaceId, rootPath: root }), "git.worktree.create", { sessionId: session.id });
    await getDb().session.update({ where: { id: session.id }, data: { worktreePath: wt.path, worktreeBranch: wt.branch, baseBranch: wt.baseBranch } });
    await writeFile(path.join(wt.path, "hello.txt"), "from the branch\n");
    setupGit(root, "config", "merge.evil.driver", mark("merge-driver"));
    await writeFile(path.join(root, ".gitattributes"), "* filter=evil diff=evil merge=evil\n");
    await expect(mergeSessionWorktreeBack(actor(), slug, session.id, { strategy: "merge" })).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringMatching(/custom merge driver/),
    });
    await discardSessionWorktree(actor(), slug, session.id);
    setupGit(root, "config", "--unset", "merge.evil.driver");
    await writeFile(path.join(root, ".gitattributes"), "* filter=evil diff=evil\n");
    expect(await readdir(markers)).toEqual([]);
  });
});
