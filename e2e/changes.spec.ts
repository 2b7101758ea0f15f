// Issue 12's Changes view in a browser, against the real CLI and the offline demo model: an
// acceptEdits session writes a file; the Changes tab lists it with its counts and opens its diff;
// a hunk and then the whole file are taken back; a line comment becomes a prompt; a viewer reads the same list without the
// take-back controls; a rewind before the first prompt previews, confirms, and shows in the
// conversation and in the history transcript.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect, test, sameOrigin, sendPrompt, signedInPage, uniqueEmail, type Page } from "./fixtures";

// The demo model's write scenario (server/model-server/demo-scenarios.ts) creates this file.
const written = "conduit-hello.md";
const writtenText = "# Hello from Conduit\n\nThis file was written by the offline demo model after you approved it.\n";

interface Ws {
  slug: string;
  rootPath: string;
}

async function newWorkspace(owner: Page, name: string, viewer: Page): Promise<Ws> {
  const created = await owner.request.post("/api/workspaces", { headers: sameOrigin, data: { name } });
  expect(created.status(), await created.text()).toBe(201);
  const ws = ((await created.json()) as { data: Ws }).data;
  const email = await viewer.getByTestId("current-user").getAttribute("title");
  const added = await owner.request.post(`/api/workspaces/${ws.slug}/members`, { headers: sameOrigin, data: { email, role: "viewer" } });
  expect(added.status(), await added.text()).toBe(201);
  return ws;
}

const onDisk = (ws: Ws, rel: string) => readFile(path.join(ws.rootPath, rel), "utf8").catch(() => undefined);

test("the Changes tab lists a turn's files, reverts a hunk and a file, and a rewind goes back to before prompt 1", async ({ browser }) => {
  test.setTimeout(240_000);
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("cora"), `Cora ${stamp}`);
  const viewer = await signedInPage(browser, uniqueEmail("vic"), `Vic ${stamp}`);
  try {
    const ws = await newWorkspace(owner, `Changes ${stamp}`, viewer);
    await owner.goto(`/w/${ws.slug}`);
    await owner.getByTestId("session-new").click();
    await owner.getByTestId("session-new-mode").selectOption("acceptEdits");
    await owner.getByTestId("session-new-submit").click();
    await expect(owner).toHaveURL(new RegExp(`/w/${ws.slug}/s/[^/]+$`));
    const sessionUrl = owner.url();

    // turn 1: the demo model writes a new file (acceptEdits: no approval)
    await sendPrompt(owner, "write");
    await expect(owner.getByTestId("turn-end")).toHaveCount(1, { timeout: 60_000 });
    await expect.poll(() => onDisk(ws, written)).toBe(writtenText);
    await expect(owner.getByTestId("notice").filter({ hasText: "This turn changed 1 file" })).toBeVisible();

    await owner.getByTestId("changes-tab").click();
    const row = owner.locator(`[data-testid="change-file"][data-path="${written}"]`);
    await expect(row).toHaveAttribute("data-status", "added");
    await expect(row.getByTestId("change-insertions")).toHaveText("+3");
    await expect(row.getByTestId("change-deletions")).toHaveText("−0");

    // a viewer sees the same list, read-only, and no rewind on the prompts
    await viewer.goto(sessionUrl);
    await expect(viewer.getByTestId("message-user")).toHaveCount(1);
    await expect(viewer.getByTestId("rewind-button")).toHaveCount(0);
    await viewer.getByTestId("changes-tab").click();
    const viewerRow = viewer.locator(`[data-testid="change-file"][data-path="${written}"]`);
    await expect(viewerRow).toHaveAttribute("data-status", "added");
    await viewerRow.click();
    await expect(viewer.getByTestId("change-diff")).toBeVisible();
    await expect(viewer.getByTestId("change-revert-file")).toHaveCount(0);
    await expect(viewer.getByTestId("change-revert-hunk")).toHaveCount(0);

    // the owner opens the diff and takes back its one hunk: the file is left empty
    await row.click();
    const diff = owner.getByTestId("change-diff");
    await expect(diff).toHaveAttribute("data-path", written);
    // Monaco comes from /monaco/vs on first use: slow on a loaded machine
    await expect(diff.locator(".monaco-editor").first()).toBeVisible({ timeout: 60_000 });
    await expect(owner.getByTestId("change-revert-hunk")).toHaveCount(1);
    await owner.getByTestId("change-revert-hunk").click();
    await expect.poll(() => onDisk(ws, written)).toBe("");
    await expect(owner.getByTestId("change-notice")).toContainText(`Reverted ${written}`);

    // then the whole file of turn 1: it did not exist before, so it goes away
    await owner.getByTestId("change-scope").selectOption({ index: 1 });
    await owner.locator(`[data-testid="change-file"][data-path="${written}"]`).click();
    await owner.getByTestId("change-revert-file").click();
    await expect.poll(() => onDisk(ws, written)).toBeUndefined();
    await owner.locator("#tab-conversation").click();
    await expect(owner.getByTestId("notice").filter({ hasText: `reverted ${written}` })).toHaveCount(1);
    await expect(owner.getByTestId("notice").filter({ hasText: `reverted a hunk of ${written}` })).toHaveCount(1);

    // turn 2 writes it again; a rewind to before prompt 1 previews one file that goes away
    await sendPrompt(owner, "write it again");
    await expect(owner.getByTestId("turn-end")).toHaveCount(2, { timeout: 60_000 });
    await expect.poll(() => onDisk(ws, written)).toBe(writtenText);

    // review in place: a comment on a line of the diff becomes the next prompt
    await owner.getByTestId("changes-tab").click();
    await owner.getByTestId("change-scope").selectOption({ index: 0 });
    await owner.locator(`[data-testid="change-file"][data-path="${written}"]`).click();
    await owner.getByTestId("diff-comment-line").fill("3");
    await owner.getByTestId("diff-comment-input").fill("Make this sentence shorter");
    await owner.getByTestId("diff-comment-send").click();
    await owner.locator("#tab-conversation").click();
    const review = owner.getByTestId("message-user").nth(2);
    await expect(review).toContainText(`Review comment on ${written}, line 3:`);
    await expect(review).toContainText("> This file was written by the offline demo model");
    await expect(review).toContainText("Make this sentence shorter");
    await expect(owner.getByTestId("turn-end")).toHaveCount(3, { timeout: 60_000 });

    await owner.getByTestId("rewind-button").first().click();
    await expect(owner.getByTestId("rewind-dialog")).toContainText("Rewind files to before the prompt “write”");
    const preview = owner.getByTestId("rewind-preview");
    await expect(preview).toBeVisible();
    await expect(preview.getByTestId("rewind-count")).toHaveText("1");
    await expect(preview.getByTestId("rewind-insertions")).toHaveText("+0");
    await expect(preview.getByTestId("rewind-deletions")).toHaveText("−3");
    await expect(preview.locator(`[data-testid="rewind-file"][data-path="${written}"]`)).toContainText("removed");
    await owner.getByTestId("rewind-confirm").click();
    await expect(owner.getByTestId("rewind-done")).toContainText("Rewound 1 file");
    await expect.poll(() => onDisk(ws, written)).toBeUndefined();
    await owner.getByRole("button", { name: "Close" }).click();
    // the prompt named by its words, not the log's event number
    await expect(owner.getByTestId("notice").filter({ hasText: "rewound the workspace's files to before the prompt “write”" })).toBeVisible();
    // the viewer's conversation shows it too
    await viewer.locator("#tab-conversation").click();
    await expect(viewer.getByTestId("notice").filter({ hasText: "rewound the workspace's files" })).toBeVisible();

    // the history transcript shows the same changes, read-only
    await viewer.goto(`/history/${ws.slug}/${sessionUrl.split("/").pop()!}`);
    const transcript = viewer.getByTestId("transcript-view");
    await expect(transcript.getByTestId("notice").filter({ hasText: "This turn changed 1 file (+3 −0)" })).toHaveCount(2);
    const panel = viewer.getByTestId("changes-panel");
    await panel.getByTestId("change-scope").selectOption({ index: 1 });
    const historyRow = panel.locator(`[data-testid="change-file"][data-path="${written}"]`);
    await expect(historyRow).toHaveAttribute("data-status", "added");
    await historyRow.click();
    await expect(panel.getByTestId("change-diff")).toHaveAttribute("data-path", written);
    await expect(panel.getByTestId("change-revert-file")).toHaveCount(0);
    await expect(panel.getByTestId("diff-comment-input")).toHaveCount(0);
  } finally {
    await owner.context().close();
    await viewer.context().close();
  }
});
