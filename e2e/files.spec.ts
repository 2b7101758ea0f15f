import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect, test, sameOrigin, signedInPage, uniqueEmail, type APIRequestContext, type Page } from "./fixtures";

interface Ws {
  slug: string;
  rootPath: string;
}

async function newWorkspace(owner: Page, name: string, member?: { page: Page; role: "editor" | "viewer" }): Promise<Ws> {
  const created = await owner.request.post("/api/workspaces", { headers: sameOrigin, data: { name } });
  expect(created.status(), await created.text()).toBe(201);
  const ws = ((await created.json()) as { data: Ws }).data;
  if (member) {
    const email = await member.page.getByTestId("current-user").getAttribute("title");
    const added = await owner.request.post(`/api/workspaces/${ws.slug}/members`, { headers: sameOrigin, data: { email, role: member.role } });
    expect(added.status(), await added.text()).toBe(201);
  }
  return ws;
}

async function createFile(request: APIRequestContext, slug: string, filePath: string, content = ""): Promise<void> {
  const res = await request.post(`/api/workspaces/${slug}/files`, { headers: sameOrigin, data: { path: filePath, kind: "file", content } });
  expect(res.status(), await res.text()).toBe(201);
}

/** Replaces the whole text of the open Monaco editor by typing. */
async function typeInEditor(page: Page, text: string): Promise<void> {
  const editor = page.getByTestId("editor").locator(".monaco-editor").first();
  await editor.click();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.type(text);
}

const viewLines = (page: Page) => page.getByTestId("editor").locator(".view-lines").first();

test("the pane lists files lazily, finds one by name, and saves an edit to disk", async ({ browser }) => {
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("fran"), `Fran ${stamp}`);
  try {
    const ws = await newWorkspace(owner, `Files ${stamp}`);
    await createFile(owner.request, ws.slug, "README.md", "# readme\n");
    await createFile(owner.request, ws.slug, "src/deep/app.ts", "export const answer = 41;\n");
    await createFile(owner.request, ws.slug, ".gitignore", "logs/\n");
    await mkdir(path.join(ws.rootPath, "node_modules", "left-pad"), { recursive: true });
    await writeFile(path.join(ws.rootPath, "node_modules", "left-pad", "app.js"), "x");
    await mkdir(path.join(ws.rootPath, "logs"));
    await mkdir(path.join(ws.rootPath, "many"));
    await Promise.all(Array.from({ length: 620 }, (_, i) => writeFile(path.join(ws.rootPath, "many", `f${String(i).padStart(4, "0")}.txt`), "")));

    await owner.goto(`/w/${ws.slug}`);
    const pane = owner.getByTestId("files-pane");
    const item = (p: string) => pane.locator(`[data-testid="file-tree-item"][data-path="${p}"]`);
    await expect(item("README.md")).toBeVisible();
    await expect(item("src")).toHaveAttribute("data-kind", "dir");
    await expect(item("node_modules")).toHaveAttribute("data-heavy", "true");
    await expect(item("logs")).toHaveAttribute("data-ignored", "true");
    // folders come first, and nothing below the first level is fetched until asked
    const paths = await pane.getByTestId("file-tree-item").evaluateAll((els) => els.map((e) => e.getAttribute("data-path")));
    expect(paths.indexOf("src")).toBeLessThan(paths.indexOf("README.md"));
    await expect(item("src/deep")).toHaveCount(0);
    await expect(item("node_modules/left-pad")).toHaveCount(0);

    // a big folder draws 500 rows, then more on request
    await item("many").click();
    await expect(item("many/f0499.txt")).toBeVisible();
    await expect(item("many/f0500.txt")).toHaveCount(0);
    await pane.getByTestId("file-tree-more").click();
    await expect(item("many/f0619.txt")).toBeVisible();
    await item("many").click();

    // name search skips node_modules
    await pane.getByTestId("file-search").fill("app");
    const result = pane.getByTestId("file-search-result");
    await expect(result).toHaveCount(1);
    await expect(result).toHaveAttribute("data-path", "src/deep/app.ts");
    await result.click();
    const editor = owner.getByTestId("editor");
    await expect(editor).toHaveAttribute("data-path", "src/deep/app.ts");
    await expect(item("src/deep/app.ts")).toBeVisible();
    await expect(viewLines(owner)).toContainText("answer = 41");

    await typeInEditor(owner, "export const answer = 42;");
    await expect(editor).toHaveAttribute("data-dirty", "true");
    await owner.getByTestId("editor-save").click();
    await expect(editor).toHaveAttribute("data-dirty", "false");
    expect(await readFile(path.join(ws.rootPath, "src", "deep", "app.ts"), "utf8")).toBe("export const answer = 42;");

    // Ctrl/Cmd-S saves too
    await typeInEditor(owner, "export const answer = 43;");
    await owner.keyboard.press("ControlOrMeta+S");
    await expect.poll(() => readFile(path.join(ws.rootPath, "src", "deep", "app.ts"), "utf8")).toBe("export const answer = 43;");

    // an unedited open file follows the disk (the 2 s version poll)
    await writeFile(path.join(ws.rootPath, "src", "deep", "app.ts"), "export const changedBySession = true;\n");
    await expect(viewLines(owner)).toContainText("changedBySession", { timeout: 10_000 });

    // create, rename and delete (with a confirmation)
    await pane.getByTestId("file-new-file").click();
    await pane.getByTestId("file-name-input").fill("notes.md");
    await pane.getByTestId("file-name-submit").click();
    await expect(item("src/deep/notes.md")).toBeVisible();
    await pane.getByTestId("file-rename").click();
    await pane.getByTestId("file-name-input").fill("src/renamed.md");
    await pane.getByTestId("file-name-submit").click();
    await expect(item("src/renamed.md")).toBeVisible();
    await expect(item("src/deep/notes.md")).toHaveCount(0);
    await pane.getByTestId("file-delete").click();
    await pane.getByTestId("file-delete-confirm").click();
    await expect(item("src/renamed.md")).toHaveCount(0);
    await expect(readFile(path.join(ws.rootPath, "src", "renamed.md"))).rejects.toThrow();

    // the same pane beside a session, as a side panel
    await owner.getByTestId("session-new").click();
    await owner.getByTestId("session-new-submit").click();
    await expect(owner).toHaveURL(/\/s\/[^/]+$/);
    await expect(owner.getByTestId("files-pane")).toHaveCount(0);
    // a wide screen has the button on the page's edge; the tab row's one is for phones
    await expect(owner.getByTestId("files-open")).toBeHidden();
    await owner.getByTestId("files-toggle").click();
    const side = owner.getByTestId("files-pane");
    await side.locator('[data-testid="file-tree-item"][data-path="README.md"]').click();
    await expect(owner.getByTestId("editor")).toHaveAttribute("data-path", "README.md");
    await expect(viewLines(owner)).toContainText("# readme");
  } finally {
    await owner.context().close();
  }
});

test("saving over a file changed on disk shows both versions to merge, never overwrites", async ({ browser }) => {
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("cora"), `Cora ${stamp}`);
  const other = await signedInPage(browser, uniqueEmail("otto"), `Otto ${stamp}`);
  try {
    const ws = await newWorkspace(owner, `Conflict ${stamp}`, { page: other, role: "editor" });
    await createFile(owner.request, ws.slug, "plan.txt", "first line\n");
    await owner.goto(`/w/${ws.slug}`);
    await owner.locator('[data-testid="file-tree-item"][data-path="plan.txt"]').click();
    await expect(viewLines(owner)).toContainText("first line");
    await typeInEditor(owner, "my line");

    // another member saves meanwhile, through the API
    const read = await other.request.get(`/api/workspaces/${ws.slug}/files/content?path=plan.txt`);
    const { version } = ((await read.json()) as { data: { version: string } }).data;
    const theirs = await other.request.put(`/api/workspaces/${ws.slug}/files/content`, { headers: sameOrigin, data: { path: "plan.txt", content: "their line\n", baseVersion: version } });
    expect(theirs.status(), await theirs.text()).toBe(200);
    // a stale version through the API is refused with the current content
    const stale = await other.request.put(`/api/workspaces/${ws.slug}/files/content`, { headers: sameOrigin, data: { path: "plan.txt", content: "again\n", baseVersion: version } });
    expect(stale.status()).toBe(409);
    expect(((await stale.json()) as { error: { current: { content: string } } }).error.current.content).toBe("their line\n");

    // the open editor notices (version poll) and, holding unsaved edits, asks instead of reloading
    const banner = owner.getByTestId("editor-disk-changed");
    await expect(banner).toBeVisible({ timeout: 10_000 });
    await expect(viewLines(owner)).toContainText("my line");
    await banner.getByTestId("editor-keep-mine").click();
    await expect(banner).toHaveCount(0);

    await owner.getByTestId("editor-save").click();
    const conflict = owner.getByTestId("editor-conflict");
    await expect(conflict).toBeVisible();
    await expect(conflict.locator(".monaco-diff-editor")).toBeVisible();
    await expect(conflict).toContainText("their line");
    await expect(conflict).toContainText("my line");
    expect(await readFile(path.join(ws.rootPath, "plan.txt"), "utf8")).toBe("their line\n");

    await owner.getByTestId("editor-conflict-save").click();
    await expect(conflict).toHaveCount(0);
    expect(await readFile(path.join(ws.rootPath, "plan.txt"), "utf8")).toBe("my line");
  } finally {
    await owner.context().close();
    await other.context().close();
  }
});

test("a viewer's editor is read-only, with no save button; the API refuses the viewer's writes", async ({ browser }) => {
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("owen"), `Owen ${stamp}`);
  const viewer = await signedInPage(browser, uniqueEmail("vera"), `Vera ${stamp}`);
  try {
    const ws = await newWorkspace(owner, `Viewer ${stamp}`, { page: viewer, role: "viewer" });
    await createFile(owner.request, ws.slug, "doc.md", "read me\n");
    await viewer.goto(`/w/${ws.slug}`);
    await viewer.locator('[data-testid="file-tree-item"][data-path="doc.md"]').click();
    await expect(viewLines(viewer)).toContainText("read me");
    await expect(viewer.getByTestId("editor-readonly")).toBeVisible();
    await expect(viewer.getByTestId("editor-save")).toHaveCount(0);
    await expect(viewer.getByTestId("file-new-file")).toHaveCount(0);
    await viewer.getByTestId("editor").locator(".monaco-editor").first().click();
    await viewer.keyboard.type("vandalism");
    await expect(viewLines(viewer)).not.toContainText("vandalism");
    await expect(viewer.getByTestId("editor")).toHaveAttribute("data-dirty", "false");

    const read = await viewer.request.get(`/api/workspaces/${ws.slug}/files/content?path=doc.md`);
    const { version } = ((await read.json()) as { data: { version: string } }).data;
    const save = await viewer.request.put(`/api/workspaces/${ws.slug}/files/content`, { headers: sameOrigin, data: { path: "doc.md", content: "x", baseVersion: version } });
    expect(save.status()).toBe(403);
    const del = await viewer.request.delete(`/api/workspaces/${ws.slug}/files?path=doc.md`, { headers: sameOrigin });
    expect(del.status()).toBe(403);
    expect(await readFile(path.join(ws.rootPath, "doc.md"), "utf8")).toBe("read me\n");
  } finally {
    await owner.context().close();
    await viewer.context().close();
  }
});

test("file routes refuse .., absolute paths, symlinks out and paths into another workspace", async ({ browser }) => {
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("cass"), `Cass ${stamp}`);
  const neighbour = await signedInPage(browser, uniqueEmail("nell"), `Nell ${stamp}`);
  try {
    const ws = await newWorkspace(owner, `Contain ${stamp}`);
    const theirs = await newWorkspace(neighbour, `Theirs ${stamp}`);
    await createFile(neighbour.request, theirs.slug, "secret.txt", "their secret\n");
    const outsideDir = path.join(os.tmpdir(), `conduit-e2e-outside-${stamp}`);
    await mkdir(outsideDir, { recursive: true });
    await writeFile(path.join(outsideDir, "outside.txt"), "outside\n");
    await symlink(path.join(outsideDir, "outside.txt"), path.join(ws.rootPath, "link-out.txt"));
    await symlink(outsideDir, path.join(ws.rootPath, "dir-out"));
    await symlink(theirs.rootPath, path.join(ws.rootPath, "neighbour"));
    const otherDirName = path.basename(theirs.rootPath);
    const api = `/api/workspaces/${ws.slug}/files`;
    const r = owner.request;
    const q = encodeURIComponent;

    const attempts: [string, number, () => ReturnType<APIRequestContext["get"]>][] = [
      ["read ..", 400, () => r.get(`${api}/content?path=${q(`../${otherDirName}/secret.txt`)}`)],
      ["read absolute", 400, () => r.get(`${api}/content?path=${q("/etc/passwd")}`)],
      ["read absolute into the neighbour", 400, () => r.get(`${api}/content?path=${q(path.join(theirs.rootPath, "secret.txt"))}`)],
      ["list ..", 400, () => r.get(`${api}?path=..`)],
      ["read symlink out", 403, () => r.get(`${api}/content?path=link-out.txt`)],
      ["version through symlink out", 403, () => r.get(`${api}/content?path=link-out.txt&versionOnly=1`)],
      ["list symlinked dir out", 403, () => r.get(`${api}?path=dir-out`)],
      ["read through a symlink into another workspace", 403, () => r.get(`${api}/content?path=neighbour/secret.txt`)],
      ["the neighbour's file through this slug", 404, () => r.get(`${api}/content?path=secret.txt`)],
      ["the neighbour's slug", 404, () => r.get(`/api/workspaces/${theirs.slug}/files/content?path=secret.txt`)],
      ["save ..", 400, () => r.put(`${api}/content`, { headers: sameOrigin, data: { path: `../${otherDirName}/secret.txt`, content: "x", baseVersion: null } })],
      ["save through symlink out", 403, () => r.put(`${api}/content`, { headers: sameOrigin, data: { path: "dir-out/new.txt", content: "x", baseVersion: null } })],
      ["create into another workspace", 403, () => r.post(api, { headers: sameOrigin, data: { path: "neighbour/planted.txt", kind: "file" } })],
      ["rename out", 400, () => r.post(`${api}/rename`, { headers: sameOrigin, data: { from: "link-out.txt", to: `../${otherDirName}/moved.txt` } })],
      ["delete ..", 400, () => r.delete(`${api}?path=${q(`../${otherDirName}/secret.txt`)}`, { headers: sameOrigin })],
      ["delete through symlink out", 403, () => r.delete(`${api}?path=${q("dir-out/outside.txt")}`, { headers: sameOrigin })],
      ["delete the root", 400, () => r.delete(`${api}?path=.`, { headers: sameOrigin })],
    ];
    for (const [name, status, attempt] of attempts) {
      const res = await attempt();
      expect(res.status(), `${name}: ${await res.text()}`).toBe(status);
    }
    expect(await readFile(path.join(outsideDir, "outside.txt"), "utf8")).toBe("outside\n");
    expect(await readFile(path.join(theirs.rootPath, "secret.txt"), "utf8")).toBe("their secret\n");
    await expect(readFile(path.join(theirs.rootPath, "planted.txt"))).rejects.toThrow();
    await expect(readFile(path.join(outsideDir, "new.txt"))).rejects.toThrow();
    // the tree shows escaping links without following them
    const listing = await r.get(api);
    const entries = ((await listing.json()) as { data: { entries: { name: string; broken?: boolean }[] } }).data.entries;
    expect(entries.find((e) => e.name === "link-out.txt")?.broken).toBe(true);
    expect(entries.find((e) => e.name === "neighbour")?.broken).toBe(true);
  } finally {
    await owner.context().close();
    await neighbour.context().close();
  }
});
