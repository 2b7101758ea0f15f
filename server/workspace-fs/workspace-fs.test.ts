import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, truncate, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentVersion, looksBinary, readFileVersion, readWorkspaceFile } from "./file-content";
import { isIgnored, parseGitignore } from "./gitignore";
import { listWorkspaceDirectory } from "./list-directory";
import { searchWorkspaceNames } from "./search-names";
import { parseRelativePath, type WorkspaceRoot } from "./workspace-path";
import { createWorkspaceEntry, deleteWorkspaceEntry, FileConflictError, renameWorkspaceEntry, saveWorkspaceFile } from "./write-file";

let dir: string;
let ws: WorkspaceRoot;
let root: string;

beforeAll(async () => {
  dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-wsfs-")));
  root = path.join(dir, "ws");
  await mkdir(path.join(root, "src", "deep"), { recursive: true });
  await mkdir(path.join(root, "node_modules", "pkg"), { recursive: true });
  await mkdir(path.join(root, "logs"), { recursive: true });
  await mkdir(path.join(root, "nested-ws"), { recursive: true });
  await writeFile(path.join(root, "nested-ws", "theirs.txt"), "theirs");
  await writeFile(path.join(root, ".gitignore"), "logs/\n*.tmp\n!keep.tmp\n");
  await writeFile(path.join(root, "src", "app.ts"), "export const a = 1;\n");
  await writeFile(path.join(root, "src", "deep", "needle-file.ts"), "x");
  await writeFile(path.join(root, "node_modules", "pkg", "needle-dep.js"), "x");
  await writeFile(path.join(root, "logs", "needle.log"), "x");
  await writeFile(path.join(root, "a.tmp"), "x");
  await writeFile(path.join(root, "keep.tmp"), "x");
  await writeFile(path.join(root, "bin.dat"), Buffer.from([1, 2, 0, 3]));
  await writeFile(path.join(root, "big.txt"), "y".repeat(2000));
  await mkdir(path.join(dir, "other-ws"));
  await writeFile(path.join(dir, "other-ws", "private.txt"), "private");
  await writeFile(path.join(dir, "secret.txt"), "secret");
  await symlink(path.join(dir, "secret.txt"), path.join(root, "escape.txt"));
  await symlink(dir, path.join(root, "up"));
  await symlink(path.join(dir, "other-ws"), path.join(root, "to-other"));
  await symlink(path.join(root, "src"), path.join(root, "src-link"));
  await symlink(path.join(dir, "nowhere"), path.join(root, "dangling"));
  await symlink(path.join(root, "nowhere"), path.join(root, "dangling-in"));
  ws = { root, excluded: [path.join(root, "nested-ws")] };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("parseRelativePath", () => {
  it("normalises and refuses what could leave the root", () => {
    expect(parseRelativePath("")).toBe("");
    expect(parseRelativePath("./src//app.ts")).toBe("src/app.ts");
    for (const bad of ["../x", "src/../../x", "/etc/passwd", "C:/x", "a\\b", "a\0b", "~/x", "x/.."]) {
      expect(() => parseRelativePath(bad), bad).toThrow();
    }
  });
});

describe("containment", () => {
  it("refuses reads and listings through symlinks that leave the root, or into a nested workspace", async () => {
    await expect(readWorkspaceFile(ws, "escape.txt")).rejects.toMatchObject({ code: "forbidden" });
    await expect(readWorkspaceFile(ws, "up/secret.txt")).rejects.toMatchObject({ code: "forbidden" });
    await expect(readWorkspaceFile(ws, "to-other/private.txt")).rejects.toMatchObject({ code: "forbidden" });
    await expect(listWorkspaceDirectory(ws, "up")).rejects.toMatchObject({ code: "forbidden" });
    await expect(readWorkspaceFile(ws, "nested-ws/theirs.txt")).rejects.toMatchObject({ code: "forbidden" });
    expect((await readWorkspaceFile(ws, "src-link/app.ts")).kind).toBe("text");
  });

  it("refuses writes through escaping or dangling symlinks, and never deletes the root or outside", async () => {
    await expect(saveWorkspaceFile(ws, "up/new.txt", "x", null)).rejects.toMatchObject({ code: "forbidden" });
    // a dangling link that leads outside is "outside" (in a door the outside is never there, so every escaping link dangles)
    await expect(createWorkspaceEntry(ws, "dangling/x.txt", "file")).rejects.toMatchObject({ code: "forbidden" });
    await expect(saveWorkspaceFile(ws, "dangling", "x", null)).rejects.toMatchObject({ code: "forbidden" });
    // one that dangles inside is a conflict: creating through it would write where the link says
    await expect(createWorkspaceEntry(ws, "dangling-in/x.txt", "file")).rejects.toMatchObject({ code: "conflict" });
    await expect(saveWorkspaceFile(ws, "dangling-in", "x", null)).rejects.toBeInstanceOf(FileConflictError);
    await expect(saveWorkspaceFile(ws, "escape.txt", "x", contentVersion("secret"))).rejects.toMatchObject({ code: "forbidden" });
    await expect(deleteWorkspaceEntry(ws, "")).rejects.toMatchObject({ code: "invalid_payload" });
    await expect(deleteWorkspaceEntry(ws, "up/secret.txt")).rejects.toMatchObject({ code: "forbidden" });
    await expect(renameWorkspaceEntry(ws, "src/app.ts", "up/stolen.ts")).rejects.toMatchObject({ code: "forbidden" });
    // deleting an escaping link removes the link, not its target
    await symlink(path.join(dir, "secret.txt"), path.join(root, "escape2.txt"));
    await deleteWorkspaceEntry(ws, "escape2.txt");
    expect(await readFile(path.join(dir, "secret.txt"), "utf8")).toBe("secret");
  });
});

describe("reading", () => {
  it("detects binary files, caps size and hashes content", async () => {
    expect(looksBinary(Buffer.from("héllo"))).toBe(false);
    expect(looksBinary(Buffer.from([0xc3]))).toBe(false); // cut at the end of the sample
    expect(looksBinary(Buffer.from([0xff, 0x41]))).toBe(true);
    expect(await readWorkspaceFile(ws, "bin.dat")).toMatchObject({ kind: "binary", size: 4 });
    expect(await readWorkspaceFile(ws, "big.txt", 1000)).toMatchObject({ kind: "too_large", size: 2000, version: contentVersion("y".repeat(2000)) });
    const text = await readWorkspaceFile(ws, "src/app.ts");
    expect(text).toMatchObject({ kind: "text", content: "export const a = 1;\n", version: contentVersion("export const a = 1;\n") });
    expect((await readFileVersion(ws, "src/app.ts")).version).toBe(text.version);
    await expect(readWorkspaceFile(ws, "src")).rejects.toMatchObject({ code: "invalid_payload" });
    // a huge file is neither read nor hashed: its version is its identity and change time
    const huge = path.join(root, "huge.bin");
    await writeFile(huge, "");
    await truncate(huge, 65 * 1024 * 1024);
    const read = await readWorkspaceFile(ws, "huge.bin");
    expect(read).toMatchObject({ kind: "too_large", size: 65 * 1024 * 1024 });
    expect(read.version).toMatch(/^stat:/);
    expect((await readFileVersion(ws, "huge.bin")).version).toBe(read.version);
    await rm(huge);
    const fifo = path.join(root, "pipe");
    execFileSync("mkfifo", [fifo]);
    await expect(readWorkspaceFile(ws, "pipe")).rejects.toMatchObject({ code: "invalid_payload" });
    await rm(fifo);
    await expect(readWorkspaceFile(ws, "missing.txt")).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("listing and search", () => {
  it("lists one level, folders first, marking heavy, ignored and escaping entries", async () => {
    const listing = await listWorkspaceDirectory(ws, "");
    const names = listing.entries.map((e) => e.name);
    expect(names.indexOf("src")).toBeLessThan(names.indexOf("a.tmp"));
    expect(names).not.toContain("nested-ws");
    const by = (n: string) => listing.entries.find((e) => e.name === n)!;
    expect(by("node_modules").heavy).toBe(true);
    expect(by("logs").ignored).toBe(true);
    expect(by("a.tmp").ignored).toBe(true);
    expect(by("keep.tmp").ignored).toBeUndefined();
    expect(by("escape.txt")).toMatchObject({ kind: "symlink", broken: true });
    expect(by("src-link")).toMatchObject({ kind: "symlink", target: "dir" });
    expect((await listWorkspaceDirectory(ws, "", 3)).truncated).toBe(true);
  });

  it("finds names, skipping heavy and ignored folders, within its limits", async () => {
    const found = await searchWorkspaceNames(ws, "NEEDLE");
    expect(found.matches.map((m) => m.path)).toEqual(["src/deep/needle-file.ts"]);
    const capped = await searchWorkspaceNames(ws, "t", { maxResults: 1, maxDirectories: 100, budgetMs: 1000 });
    expect(capped).toMatchObject({ stopped: "results" });
    expect(capped.matches).toHaveLength(1);
    let t = 0;
    const slow = await searchWorkspaceNames(ws, "needle", { maxResults: 10, maxDirectories: 100, budgetMs: 5 }, () => (t += 10));
    expect(slow.stopped).toBe("time");
  });

  it("matches .gitignore patterns as git does for the common forms", () => {
    const rules = [parseGitignore("", "/build\n**/gen/*.js\n*.log\n!important.log\ndocs/**/draft\n")];
    expect(isIgnored("build", true, rules)).toBe(true);
    expect(isIgnored("src/build", true, rules)).toBe(false);
    expect(isIgnored("a/b/gen/x.js", false, rules)).toBe(true);
    expect(isIgnored("x/y.log", false, rules)).toBe(true);
    expect(isIgnored("important.log", false, rules)).toBe(false);
    expect(isIgnored("docs/a/b/draft", false, rules)).toBe(true);
  });
});

describe("writing", () => {
  it("saves over the version it started from and refuses a stale one with the current content", async () => {
    const created = await createWorkspaceEntry(ws, "notes/todo.md", "file", "one\n");
    expect(created.version).toBe(contentVersion("one\n"));
    const saved = await saveWorkspaceFile(ws, "notes/todo.md", "two\n", created.version!);
    expect(await readFile(path.join(root, "notes", "todo.md"), "utf8")).toBe("two\n");
    const stale = await saveWorkspaceFile(ws, "notes/todo.md", "three\n", created.version!).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(FileConflictError);
    expect((stale as FileConflictError).current).toMatchObject({ version: saved.version, content: "two\n" });
    expect(await readFile(path.join(root, "notes", "todo.md"), "utf8")).toBe("two\n");
    await expect(createWorkspaceEntry(ws, "notes/todo.md", "file")).rejects.toMatchObject({ code: "conflict" });
    await expect(saveWorkspaceFile(ws, "notes/todo.md", "x", null)).rejects.toBeInstanceOf(FileConflictError);
  });

  it("creates folders, renames and deletes inside the workspace", async () => {
    await createWorkspaceEntry(ws, "made/inner", "dir");
    await renameWorkspaceEntry(ws, "made", "moved");
    await expect(renameWorkspaceEntry(ws, "moved", "moved/inner/again")).rejects.toMatchObject({ code: "invalid_payload" });
    await expect(renameWorkspaceEntry(ws, "moved", "src")).rejects.toMatchObject({ code: "conflict" });
    expect((await listWorkspaceDirectory(ws, "moved")).entries.map((e) => e.name)).toEqual(["inner"]);
    await deleteWorkspaceEntry(ws, "moved");
    await expect(listWorkspaceDirectory(ws, "moved")).rejects.toMatchObject({ code: "not_found" });
  });
});
