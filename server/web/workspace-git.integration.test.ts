// The git routes' service against a real, migrated SQLite database, real git and the real
// workspace door (sandboxed when bubblewrap works): who may read, commit, discard, merge and
// discard a worktree; the audit row of each; the 409s.
import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "@/server/db/client";
import { gitScope, setWorkspaceDoor, workspaceDoor } from "@/server/workspace-agent";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { setupGit } from "@/test/setup-git";
import {
  commitGit,
  discardGit,
  discardSessionWorktree,
  getGitDiff,
  getGitStatus,
  getSessionWorktree,
  mergeSessionWorktreeBack,
  releaseSessionWorktree,
} from "./workspace-git";

const savedUrl = process.env.DATABASE_URL;
let f: SessionFixtures;
let root: string;
const actor = (u: { id: string; name: string }) => ({ id: u.id, name: u.name, email: `${u.name.toLowerCase()}@example.test` });
const git = (...args: string[]) => setupGit(root, ...args);

beforeAll(async () => {
  f = await createSessionFixtures({ slug: "git-demo" });
  await f.db.$disconnect();
  process.env.DATABASE_URL = f.url;
  root = f.workspace.rootPath;
  await writeFile(path.join(root, "hello.txt"), "hello\n");
  git("init", "-q");
  git("add", "-A");
  git("commit", "-q", "-m", "initial");
});

afterAll(async () => {
  workspaceDoor().close();
  setWorkspaceDoor(undefined);
  await closeDb();
  if (savedUrl === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = savedUrl;
  await f.close();
});

/** A session's worktree made as the sidecar makes it: by the workspace's git door. */
async function createSessionWorktree(sessionId: string) {
  return workspaceDoor().call(await gitScope({ id: f.workspace.id, rootPath: root, excluded: [] }), "git.worktree.create", { sessionId });
}

async function newSession(data: object = {}): Promise<string> {
  const row = await getDb().session.create({ data: { workspaceId: f.workspace.id, createdById: f.owner.id, status: "stopped", ...data }, select: { id: true } });
  return row.id;
}

describe("workspace git service", () => {
  it("lets members read; owners and editors commit and discard, audited; viewers and non-members are refused", async () => {
    const slug = f.workspace.slug;
    await writeFile(path.join(root, "hello.txt"), "hello, world\n");
    for (const member of [f.owner, f.editor, f.viewer]) {
      expect(await getGitStatus(member.id, slug)).toMatchObject({ repository: true, branch: "main", files: [{ path: "hello.txt", unstaged: "modified" }] });
      expect(await getGitDiff(member.id, slug, { path: "hello.txt" })).toMatchObject({ before: { content: "hello\n" }, after: { content: "hello, world\n" } });
    }
    await expect(getGitStatus(f.outsider.id, slug)).rejects.toMatchObject({ code: "not_found" });
    await expect(commitGit(actor(f.viewer), slug, { paths: ["hello.txt"], message: "no" })).rejects.toMatchObject({ code: "forbidden" });
    await expect(commitGit(actor(f.outsider), slug, { paths: ["hello.txt"], message: "no" })).rejects.toMatchObject({ code: "not_found" });
    await expect(discardGit(actor(f.viewer), slug, { path: "hello.txt", confirmDelete: false })).rejects.toMatchObject({ code: "forbidden" });

    const made = await commitGit(actor(f.editor), slug, { paths: ["hello.txt"], message: "Greet the world" });
    expect(git("log", "-1", "--format=%an <%ae>|%s").trim()).toBe(`${f.editor.name} <${f.editor.name.toLowerCase()}@example.test>|Greet the world`);
    await writeFile(path.join(root, "scratch.txt"), "scratch\n");
    await discardGit(actor(f.owner), slug, { path: "scratch.txt", confirmDelete: true });
    await expect(stat(path.join(root, "scratch.txt"))).rejects.toThrow();

    const rows = await getDb().auditLog.findMany({ where: { workspaceId: f.workspace.id, objectType: "git" }, orderBy: { at: "asc" } });
    expect(rows.map((r) => [r.action, r.objectId, r.actorId])).toEqual([
      ["git.commit", made.commit, f.editor.id],
      ["git.discard", "scratch.txt", f.owner.id],
    ]);
    expect(JSON.parse(rows[0]!.details ?? "{}")).toMatchObject({ branch: "main", paths: ["hello.txt"], message: "Greet the world" });
  });

  it("lets owners merge a session's worktree back and discard it, audited; editors may only look", async () => {
    const slug = f.workspace.slug;
    const sessionId = await newSession();
    const wt = await createSessionWorktree(sessionId);
    await getDb().session.update({ where: { id: sessionId }, data: { worktreePath: wt.path, worktreeBranch: wt.branch, baseBranch: wt.baseBranch } });
    await writeFile(path.join(wt.path, "hello.txt"), "hello from the branch\n");

    expect(await getSessionWorktree(f.viewer.id, slug, sessionId)).toMatchObject({ branch: wt.branch, baseBranch: "main", closedAt: null, changes: [{ path: "hello.txt", status: "modified" }] });
    expect(await getSessionWorktree(f.viewer.id, slug, await newSession())).toBeNull();
    await expect(mergeSessionWorktreeBack(actor(f.editor), slug, sessionId, { strategy: "merge" })).rejects.toMatchObject({ code: "forbidden" });
    await expect(discardSessionWorktree(actor(f.editor), slug, sessionId)).rejects.toMatchObject({ code: "forbidden" });
    await expect(getSessionWorktree(f.outsider.id, slug, sessionId)).rejects.toMatchObject({ code: "not_found" });

    await mergeSessionWorktreeBack(actor(f.owner), slug, sessionId, { strategy: "merge" });
    expect(await readFile(path.join(root, "hello.txt"), "utf8")).toBe("hello from the branch\n");

    await getDb().session.update({ where: { id: sessionId }, data: { status: "running" } });
    await expect(discardSessionWorktree(actor(f.owner), slug, sessionId)).rejects.toMatchObject({ code: "conflict", message: expect.stringMatching(/stop it first/) });
    await getDb().session.update({ where: { id: sessionId }, data: { status: "stopped" } });
    await discardSessionWorktree(actor(f.owner), slug, sessionId);
    await expect(stat(wt.path)).rejects.toThrow();
    expect((await getSessionWorktree(f.owner.id, slug, sessionId))?.closedAt).not.toBeNull();
    await expect(mergeSessionWorktreeBack(actor(f.owner), slug, sessionId, { strategy: "merge" })).rejects.toMatchObject({ code: "conflict", message: "This session's worktree was discarded." });

    const rows = await getDb().auditLog.findMany({ where: { workspaceId: f.workspace.id, objectType: "session", objectId: sessionId }, orderBy: { at: "asc" } });
    expect(rows.map((r) => [r.action, r.actorId])).toEqual([
      ["git.worktree.merge", f.owner.id],
      ["git.worktree.discard", f.owner.id],
    ]);
  });

  it("releases a worktree for the session-delete code", async () => {
    const sessionId = await newSession();
    const wt = await createSessionWorktree(sessionId);
    await getDb().session.update({ where: { id: sessionId }, data: { worktreePath: wt.path, worktreeBranch: wt.branch, baseBranch: wt.baseBranch } });
    await releaseSessionWorktree(sessionId);
    await expect(stat(wt.path)).rejects.toThrow();
    expect(git("branch", "--list", wt.branch).trim()).toBe("");
    await releaseSessionWorktree(sessionId);
    await releaseSessionWorktree(await newSession());
  });
});
