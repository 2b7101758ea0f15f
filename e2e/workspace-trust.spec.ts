import { existsSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, test, sameOrigin, signedInPage, startSession, uniqueEmail } from "./fixtures";
import type { Page } from "@playwright/test";

async function startTour(owner: Page, slug: string): Promise<void> {
  await owner.goto(`/w/${slug}`);
  await startSession(owner, "default");
  const input = owner.getByTestId("prompt-input");
  await input.fill("show me around");
  await input.press("Enter");
}

// Issue 11: settings written into a workspace (by a session, a commit, a teammate) must not skip
// Conduit's approvals or run hooks; the owner sees what they would add.
test("a workspace's own settings that pre-allow every tool still get an approval; the owner sees what they would add", async ({ browser }) => {
  test.setTimeout(180_000);
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("trust"), `Trust ${stamp}`);
  try {
    const created = await owner.request.post("/api/workspaces", { headers: sameOrigin, data: { name: `Trust ${stamp}` } });
    expect(created.status(), await created.text()).toBe(201);
    const { data: ws } = (await created.json()) as { data: { slug: string; rootPath: string } };
    await mkdir(path.join(ws.rootPath, ".claude"), { recursive: true });
    await writeFile(
      path.join(ws.rootPath, ".claude", "settings.local.json"),
      JSON.stringify({
        permissions: { allow: ["Bash", "Read", "Write", "Edit"] },
        hooks: { PreToolUse: [{ matcher: "", hooks: [{ type: "command", command: "touch HOOK_RAN" }] }] },
      }),
    );

    await owner.goto(`/w/${ws.slug}`);
    const review = owner.getByTestId("workspace-settings-review");
    await expect(review).toHaveAttribute("data-grants", "yes");
    await expect(review.getByTestId("workspace-settings-allow")).toHaveText(["Bash", "Read", "Write", "Edit"]);
    await expect(review.getByTestId("workspace-settings-hook")).toContainText("touch HOOK_RAN");

    // The demo tour's first tool call asks, although the settings allow it.
    await startTour(owner, ws.slug);
    await expect(owner.locator('[data-testid="approval-card"][data-status="pending"]').first()).toBeVisible({ timeout: 60_000 });
    expect(existsSync(path.join(ws.rootPath, "HOOK_RAN"))).toBe(false);
    const settingsReview = await owner.request.get(`/api/workspaces/${ws.slug}/settings-review`);
    expect(settingsReview.status()).toBe(200);
    expect(((await settingsReview.json()) as { data: { trusted: boolean } }).data.trusted).toBe(false);

    // The owner trusts these exact contents: new sessions load them, so the tour's tools run
    // without asking and the hook runs.
    await owner.goto(`/w/${ws.slug}`);
    await owner.getByTestId("workspace-settings-trust").click();
    await expect(owner.getByTestId("workspace-settings-review")).toHaveAttribute("data-trusted", "yes");
    await startTour(owner, ws.slug);
    await expect.poll(() => existsSync(path.join(ws.rootPath, "HOOK_RAN")), { timeout: 60_000, message: "the trusted hook ran" }).toBe(true);
    await expect.poll(() => existsSync(path.join(ws.rootPath, "conduit-demo.md")), { timeout: 60_000, message: "the tour's Write ran without asking" }).toBe(true);
    await expect(owner.locator('[data-testid="approval-card"][data-status="pending"]')).toHaveCount(0);

    // Any change to the files ends the trust by itself: the next process runs without them.
    await writeFile(path.join(ws.rootPath, ".claude", "settings.local.json"), JSON.stringify({ permissions: { allow: ["Bash", "Read", "Write", "Edit", "WebFetch"] } }));
    const changed = await owner.request.get(`/api/workspaces/${ws.slug}/settings-review`);
    expect(((await changed.json()) as { data: { trusted: boolean } }).data.trusted).toBe(false);
    await rm(path.join(ws.rootPath, "conduit-demo.md"));
    await startTour(owner, ws.slug);
    await expect(owner.locator('[data-testid="approval-card"][data-status="pending"]').first()).toBeVisible({ timeout: 60_000 });
    const stale = await owner.request.post(`/api/workspaces/${ws.slug}/settings-review`, {
      headers: sameOrigin,
      data: { digest: "0".repeat(64) },
    });
    expect(stale.status(), "trusting contents that are not the files' is refused").toBe(409);
  } finally {
    await owner.context().close();
  }
});
