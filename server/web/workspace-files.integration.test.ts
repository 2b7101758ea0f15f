// The file routes' service against a real, migrated SQLite database and the real workspace door
// (sandboxed when bubblewrap works): who may read and write, the audit row of every write,
// conflicts, a workspace nested inside another kept apart, and a symlinked folder leading out.
import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "@/server/db/client";
import { FileConflictError, setWorkspaceDoor, workspaceDoor } from "@/server/workspace-agent";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { createFile, deleteFile, listFiles, readFile as readWorkspaceFileAs, renameFile, saveFile, searchFiles, workspaceFilesScope } from "./workspace-files";
import { readSettingsReview, trustWorkspaceSettings } from "./workspace-settings";

const savedUrl = process.env.DATABASE_URL;
const savedDataDir = process.env.CONDUIT_DATA_DIR;
let f: SessionFixtures;

beforeAll(async () => {
  f = await createSessionFixtures({ slug: "files-demo" });
  await f.db.$disconnect();
  process.env.DATABASE_URL = f.url;
  // The doors' shadow folders go to the fixture's data directory (read once, at the first call).
  process.env.CONDUIT_DATA_DIR = f.dataDir;
  await writeFile(path.join(f.workspace.rootPath, "hello.txt"), "hello\n");
});

afterAll(async () => {
  workspaceDoor().close();
  setWorkspaceDoor(undefined);
  await closeDb();
  if (savedUrl === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = savedUrl;
  if (savedDataDir === undefined) delete process.env.CONDUIT_DATA_DIR;
  else process.env.CONDUIT_DATA_DIR = savedDataDir;
  await f.close();
});

describe("workspace files service", () => {
  it("lets members read, refuses non-members with not_found and viewers' writes with forbidden", async () => {
    const slug = f.workspace.slug;
    for (const member of [f.owner, f.editor, f.viewer]) {
      expect((await listFiles(member.id, slug, "")).entries.map((e) => e.name)).toContain("hello.txt");
      expect(await readWorkspaceFileAs(member.id, slug, "hello.txt", false)).toMatchObject({ kind: "text", content: "hello\n" });
    }
    await expect(listFiles(f.outsider.id, slug, "")).rejects.toMatchObject({ code: "not_found" });
    await expect(readWorkspaceFileAs(f.outsider.id, slug, "hello.txt", true)).rejects.toMatchObject({ code: "not_found" });
    await expect(searchFiles(f.outsider.id, slug, "hello")).rejects.toMatchObject({ code: "not_found" });
    await expect(createFile(f.viewer.id, slug, { path: "v.txt", kind: "file" })).rejects.toMatchObject({ code: "forbidden" });
    await expect(deleteFile(f.viewer.id, slug, "hello.txt")).rejects.toMatchObject({ code: "forbidden" });
    await expect(renameFile(f.viewer.id, slug, { from: "hello.txt", to: "x.txt" })).rejects.toMatchObject({ code: "forbidden" });
    await expect(saveFile(f.viewer.id, slug, { path: "hello.txt", content: "x", baseVersion: null })).rejects.toMatchObject({ code: "forbidden" });
    await expect(createFile(f.outsider.id, slug, { path: "o.txt", kind: "file" })).rejects.toMatchObject({ code: "not_found" });
  });

  it("audits every write with the relative path, and refuses a stale save without writing", async () => {
    const slug = f.workspace.slug;
    const created = await createFile(f.editor.id, slug, { path: "docs/a.md", kind: "file", content: "one\n" });
    const saved = await saveFile(f.owner.id, slug, { path: "docs/a.md", content: "two\n", baseVersion: created.version! });
    const stale = await saveFile(f.editor.id, slug, { path: "docs/a.md", content: "three\n", baseVersion: created.version! }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(FileConflictError);
    expect((stale as FileConflictError).current).toMatchObject({ version: saved.version, content: "two\n" });
    await renameFile(f.editor.id, slug, { from: "docs/a.md", to: "docs/b.md" });
    await deleteFile(f.owner.id, slug, "docs/b.md");
    const rows = await getDb().auditLog.findMany({ where: { workspaceId: f.workspace.id, objectType: "file" }, orderBy: { id: "asc" } });
    expect(rows.map((r) => [r.action, r.objectId, r.actorId])).toEqual([
      ["file.create", "docs/a.md", f.editor.id],
      ["file.save", "docs/a.md", f.owner.id],
      ["file.rename", "docs/a.md", f.editor.id],
      ["file.delete", "docs/b.md", f.owner.id],
    ]);
    expect(JSON.parse(rows[2]!.details ?? "{}")).toMatchObject({ to: "docs/b.md" });
  });

  it("keeps a workspace nested inside this one out of reach", async () => {
    const innerRoot = path.join(f.workspace.rootPath, "inner");
    await mkdir(innerRoot);
    await writeFile(path.join(innerRoot, "theirs.txt"), "theirs\n");
    await getDb().workspace.create({ data: { name: "Inner", slug: "inner", rootPath: innerRoot } });
    const slug = f.workspace.slug;
    expect((await listFiles(f.owner.id, slug, "")).entries.map((e) => e.name)).not.toContain("inner");
    // In the door's sandbox the nested workspace is an empty folder (not found); without one, forbidden.
    await expect(readWorkspaceFileAs(f.owner.id, slug, "inner/theirs.txt", false)).rejects.toMatchObject({ code: expect.stringMatching(/^(forbidden|not_found)$/) });
    await expect(deleteFile(f.owner.id, slug, "inner")).rejects.toMatchObject({ code: "forbidden" });
    await expect(saveFile(f.owner.id, slug, { path: "inner/planted.txt", content: "x", baseVersion: null })).rejects.toMatchObject({ code: "forbidden" });
    expect(await readFile(path.join(innerRoot, "theirs.txt"), "utf8")).toBe("theirs\n");
  });

  it("never reads or writes through a folder that is a symlink to outside the workspace", async () => {
    const outside = path.join(f.dir, "outside");
    await mkdir(outside);
    const secret = "outside-secret-bytes-7f3a\n";
    await writeFile(path.join(outside, "secret.txt"), secret);
    await symlink(outside, path.join(f.workspace.rootPath, "out"));
    const slug = f.workspace.slug;
    const attempts: (() => Promise<unknown>)[] = [
      () => listFiles(f.owner.id, slug, "out"),
      () => readWorkspaceFileAs(f.owner.id, slug, "out/secret.txt", false),
      () => readWorkspaceFileAs(f.owner.id, slug, "out/secret.txt", true),
      () => saveFile(f.owner.id, slug, { path: "out/secret.txt", content: "overwritten\n", baseVersion: null }),
      () => saveFile(f.owner.id, slug, { path: "out/planted.txt", content: "planted\n", baseVersion: null }),
      () => createFile(f.owner.id, slug, { path: "out/made.txt", kind: "file", content: "made\n" }),
      () => createFile(f.owner.id, slug, { path: "out/dir", kind: "dir" }),
      () => renameFile(f.owner.id, slug, { from: "out/secret.txt", to: "stolen.txt" }),
      () => deleteFile(f.owner.id, slug, "out/secret.txt"),
    ];
    for (const attempt of attempts) {
      const err = await attempt().then(
        (value) => ({ value }),
        (e: unknown) => e,
      );
      // Refused (what the door says depends on whether the outside is there to see: not with bubblewrap).
      expect(err).toBeInstanceOf(Error);
      expect(err).toMatchObject({ code: expect.stringMatching(/^(forbidden|not_found|conflict)$/) });
      expect(JSON.stringify(err)).not.toContain("outside-secret");
      expect(String((err as Error).message)).not.toContain("outside-secret");
    }
    expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe(secret);
    expect((await readdir(outside)).sort()).toEqual(["secret.txt"]);
    // The link itself is listed as what it is: a link whose target is not in the workspace.
    const listed = (await listFiles(f.owner.id, slug, "")).entries.find((e) => e.name === "out");
    expect(listed).toMatchObject({ kind: "symlink", broken: true });
    expect((await searchFiles(f.owner.id, slug, "secret")).matches).toEqual([]);
  });

  it("reviews and trusts the workspace's settings through its door, and checks a worktree's under it", async () => {
    const slug = f.workspace.slug;
    await mkdir(path.join(f.workspace.rootPath, ".claude"), { recursive: true });
    await writeFile(path.join(f.workspace.rootPath, ".claude", "settings.json"), JSON.stringify({ permissions: { allow: ["Bash"] } }));
    const review = await readSettingsReview(f.owner.id, slug);
    expect(review).toMatchObject({ grantsAnything: true, trusted: false });
    await expect(readSettingsReview(f.editor.id, slug)).rejects.toMatchObject({ code: "forbidden" });
    expect(await trustWorkspaceSettings(f.owner.id, slug, review.digest)).toMatchObject({ trusted: true });
    const scope = await workspaceFilesScope(f.workspace);
    expect(await workspaceDoor().call(scope, "settings.stillTrusted", { trustedDigest: review.digest })).toBe(true);
    // a worktree with the same files is trusted under it; one that differs, is missing or leads out is not
    const worktree = path.join(f.workspace.rootPath, ".conduit", "worktrees", "abc");
    await mkdir(path.join(worktree, ".claude"), { recursive: true });
    await writeFile(path.join(worktree, ".claude", "settings.json"), JSON.stringify({ permissions: { allow: ["Bash"] } }));
    expect(await workspaceDoor().call(scope, "settings.stillTrusted", { trustedDigest: review.digest, under: ".conduit/worktrees/abc" })).toBe(true);
    await writeFile(path.join(worktree, ".claude", "settings.json"), JSON.stringify({ permissions: { allow: ["Bash", "Write"] } }));
    expect(await workspaceDoor().call(scope, "settings.stillTrusted", { trustedDigest: review.digest, under: ".conduit/worktrees/abc" })).toBe(false);
    expect(await workspaceDoor().call(scope, "settings.stillTrusted", { trustedDigest: review.digest, under: ".conduit/worktrees/gone" })).toBe(false);
    await symlink(path.join(f.dir, "outside"), path.join(f.workspace.rootPath, ".conduit", "worktrees", "out"));
    expect(await workspaceDoor().call(scope, "settings.stillTrusted", { trustedDigest: review.digest, under: ".conduit/worktrees/out" })).toBe(false);
    await expect(workspaceDoor().call(scope, "settings.stillTrusted", { trustedDigest: review.digest, under: "../x" })).rejects.toBeInstanceOf(Error);
  });
});
