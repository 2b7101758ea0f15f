/**
 * Git in the browser: a repository workspace shows its branch and changed files, commits the
 * selected ones as the signed-in user and discards a change (confirmed); a session can start in
 * its own worktree; a workspace that is not a repository shows nothing of git.
 */
import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, test, sameOrigin, signedInPage, uniqueEmail, type Page } from "./fixtures";

interface Ws {
  slug: string;
  rootPath: string;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Setup", "-c", "user.email=setup@example.test", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  });
}

async function newWorkspace(owner: Page, name: string): Promise<Ws> {
  const created = await owner.request.post("/api/workspaces", { headers: sameOrigin, data: { name } });
  expect(created.status(), await created.text()).toBe(201);
  return ((await created.json()) as { data: Ws }).data;
}

/** A workspace that is a repository with one commit on `main` (a.txt, b.txt). */
async function newRepository(owner: Page, name: string): Promise<Ws> {
  const ws = await newWorkspace(owner, name);
  await writeFile(path.join(ws.rootPath, "a.txt"), "alpha\n");
  await writeFile(path.join(ws.rootPath, "b.txt"), "beta\n");
  git(ws.rootPath, "init", "-q");
  git(ws.rootPath, "add", "-A");
  git(ws.rootPath, "commit", "-q", "-m", "initial");
  return ws;
}

test("a repository workspace shows its branch and commits the selected files as the user", async ({ browser }) => {
  const stamp = Date.now().toString(36);
  const email = uniqueEmail("gita");
  const owner = await signedInPage(browser, email, `Gita ${stamp}`);
  try {
    const ws = await newRepository(owner, `Repo ${stamp}`);
    await writeFile(path.join(ws.rootPath, "a.txt"), "alpha\nmore\n");
    await writeFile(path.join(ws.rootPath, "b.txt"), "beta changed\n");
    await writeFile(path.join(ws.rootPath, "new.txt"), "brand new\n");
    await owner.goto(`/w/${ws.slug}`);
    await expect(owner.getByTestId("git-branch")).toHaveText("main");
    const file = (p: string) => owner.locator(`[data-testid="git-file"][data-path="${p}"]`);
    await expect(file("a.txt")).toHaveAttribute("data-status", "modified");
    await expect(file("new.txt")).toHaveAttribute("data-status", "untracked");

    // the diff against HEAD opens in Monaco
    await file("a.txt").getByRole("button", { name: "a.txt" }).click();
    await expect(owner.getByTestId("git-diff")).toHaveAttribute("data-path", "a.txt");
    await expect(owner.getByTestId("git-diff").locator(".monaco-diff-editor")).toBeVisible();

    // an empty message is refused in place
    await file("a.txt").getByTestId("git-file-select").check();
    await owner.getByTestId("git-commit-submit").click();
    await expect(owner.getByTestId("git-error")).toHaveText("Write a commit message first.");

    await file("new.txt").getByTestId("git-file-select").check();
    await owner.getByTestId("git-commit-message").fill("Add more alpha and a new file");
    await owner.getByTestId("git-commit-submit").click();
    await expect(owner.getByTestId("git-done")).toContainText("on main");
    await expect(file("a.txt")).toHaveCount(0);
    await expect(file("b.txt")).toHaveAttribute("data-status", "modified");

    expect(git(ws.rootPath, "log", "-1", "--format=%an <%ae>|%cn|%s").trim()).toBe(`Gita ${stamp} <${email}>|Gita ${stamp}|Add more alpha and a new file`);
    expect(git(ws.rootPath, "show", "--name-status", "--format=", "HEAD").trim().split("\n").sort()).toEqual(["A\tnew.txt", "M\ta.txt"]);

    // discard, confirmed: b.txt is as committed again
    await file("b.txt").getByTestId("git-discard").click();
    await file("b.txt").getByTestId("git-discard-confirm").click();
    await expect(owner.getByTestId("git-done")).toHaveText("Restored b.txt from the last commit.");
    expect(await readFile(path.join(ws.rootPath, "b.txt"), "utf8")).toBe("beta\n");
    await expect(owner.getByTestId("git-file")).toHaveCount(0);
  } finally {
    await owner.context().close();
  }
});

test("a workspace that is not a repository shows no git at all", async ({ browser }) => {
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("plain"), `Plain ${stamp}`);
  try {
    const ws = await newWorkspace(owner, `Plain ${stamp}`);
    await writeFile(path.join(ws.rootPath, "notes.txt"), "not versioned\n");
    await owner.goto(`/w/${ws.slug}`);
    await expect(owner.getByTestId("files-pane")).toBeVisible();
    await owner.getByTestId("session-new").click();
    await expect(owner.getByTestId("session-new-submit")).toBeVisible();
    await expect(owner.getByTestId("session-new-worktree")).toHaveCount(0);
    await expect(owner.getByTestId("git-panel")).toHaveCount(0);
    await expect(owner.getByTestId("git-branch")).toHaveCount(0);
    const status = await owner.request.get(`/api/workspaces/${ws.slug}/git`);
    expect(await status.json()).toEqual({ data: { repository: false } });
    const commit = await owner.request.post(`/api/workspaces/${ws.slug}/git/commit`, { headers: sameOrigin, data: { paths: ["notes.txt"], message: "x" } });
    expect(commit.status()).toBe(409);
    expect(((await commit.json()) as { error: { message: string } }).error.message).toBe("This workspace is not a git repository.");
  } finally {
    await owner.context().close();
  }
});

test("a session starts in its own worktree; its panel shows the branch and merges it back", async ({ browser }) => {
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("wendy"), `Wendy ${stamp}`);
  try {
    const ws = await newRepository(owner, `Worktree ${stamp}`);
    await owner.goto(`/w/${ws.slug}`);
    await owner.getByTestId("session-new").click();
    await owner.getByTestId("session-new-worktree").check();
    await owner.getByTestId("session-new-submit").click();
    await expect(owner).toHaveURL(/\/s\//);
    // the worktree's branch and merge sit in the session's Changes view
    await owner.getByTestId("changes-tab").click();
    await expect(owner.getByTestId("worktree-branch")).toHaveText(/^conduit\/[A-Za-z0-9]+$/);
    const branch = (await owner.getByTestId("worktree-branch").textContent())!;
    expect(git(ws.rootPath, "branch", "--list", "--format=%(refname:short)", branch).trim()).toBe(branch);

    // a change made in the worktree is the branch's, not the workspace checkout's
    const worktreePath = path.join(ws.rootPath, ".conduit", "worktrees", branch.slice("conduit/".length));
    await writeFile(path.join(worktreePath, "a.txt"), "alpha from the session\n");
    await expect(owner.locator('[data-testid="worktree-change"][data-path="a.txt"]')).toHaveAttribute("data-status", "modified");
    expect(await readFile(path.join(ws.rootPath, "a.txt"), "utf8")).toBe("alpha\n");

    await owner.getByTestId("worktree-merge").click();
    await expect(owner.getByTestId("worktree-done")).toContainText(`${branch} is in main`);
    expect(await readFile(path.join(ws.rootPath, "a.txt"), "utf8")).toBe("alpha from the session\n");

    // both sides change the same line: the merge is aborted, the file listed, nothing lost
    await writeFile(path.join(worktreePath, "a.txt"), "the session's second take\n");
    await writeFile(path.join(ws.rootPath, "a.txt"), "main's second take\n");
    git(ws.rootPath, "commit", "-q", "-am", "main moves on");
    const head = git(ws.rootPath, "rev-parse", "HEAD").trim();
    await owner.getByTestId("worktree-merge").click();
    await expect(owner.getByTestId("worktree-conflicts")).toHaveText("a.txt");
    await expect(owner.getByTestId("worktree-error")).toContainText("aborted");
    expect(git(ws.rootPath, "rev-parse", "HEAD").trim()).toBe(head);
    expect(git(ws.rootPath, "status", "--porcelain").trim()).toBe("");
    expect(await readFile(path.join(ws.rootPath, "a.txt"), "utf8")).toBe("main's second take\n");
    expect(git(ws.rootPath, "show", `${branch}:a.txt`)).toBe("the session's second take\n");
  } finally {
    await owner.context().close();
  }
});
