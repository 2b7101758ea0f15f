// The file routes' service against a real, migrated SQLite database: who may read and write,
// the audit row of every write, conflicts, and a workspace nested inside another kept apart.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "@/server/db/client";
import { FileConflictError } from "@/server/workspace-fs/write-file";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { createFile, deleteFile, listFiles, readFile as readWorkspaceFileAs, renameFile, saveFile, searchFiles } from "./workspace-files";

const savedUrl = process.env.DATABASE_URL;
let f: SessionFixtures;

beforeAll(async () => {
  f = await createSessionFixtures({ slug: "files-demo" });
  await f.db.$disconnect();
  process.env.DATABASE_URL = f.url;
  await writeFile(path.join(f.workspace.rootPath, "hello.txt"), "hello\n");
});

afterAll(async () => {
  await closeDb();
  if (savedUrl === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = savedUrl;
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
    await expect(readWorkspaceFileAs(f.owner.id, slug, "inner/theirs.txt", false)).rejects.toMatchObject({ code: "forbidden" });
    await expect(deleteFile(f.owner.id, slug, "inner")).rejects.toMatchObject({ code: "forbidden" });
    await expect(saveFile(f.owner.id, slug, { path: "inner/planted.txt", content: "x", baseVersion: null })).rejects.toMatchObject({ code: "forbidden" });
    expect(await readFile(path.join(innerRoot, "theirs.txt"), "utf8")).toBe("theirs\n");
  });
});
