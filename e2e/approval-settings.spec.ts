import { expect, test, createWorkspace, sameOrigin, sendPrompt, signedInPage, startSession, uniqueEmail, type APIRequestContext, type Locator, type Page } from "./fixtures";

interface Settings {
  approvalDeadlineSec: number | null;
  rules: { id: string; toolName: string; ruleContent: string | null; createdBy: { email: string } | null }[];
}

async function readSettings(request: APIRequestContext, slug: string): Promise<Settings> {
  const res = await request.get(`/api/workspaces/${slug}/approval-settings`);
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { data: Settings }).data;
}

function pendingCard(page: Page): Locator {
  return page.locator('[data-testid="approval-card"][data-status="pending"]');
}

test("an owner sets the approval deadline to never; a viewer sees it but cannot change it", async ({ browser }) => {
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("olga"), `Olga ${stamp}`);
  const viewer = await signedInPage(browser, uniqueEmail("vic"), `Vic ${stamp}`);
  try {
    const { slug } = await createWorkspace(owner, `Deadline ${stamp}`, { page: viewer, role: "viewer" });

    await owner.goto(`/w/${slug}`);
    const panel = owner.getByTestId("approval-settings");
    await expect(panel.getByTestId("approval-deadline")).toHaveText("10 minutes");
    await expect(panel.getByTestId("approval-deadline-select")).toHaveValue("600");
    await expect(panel.getByTestId("permission-rule")).toHaveCount(0);
    await expect(panel).toContainText("No remembered rules");

    await panel.getByTestId("approval-deadline-select").selectOption({ label: "never" });
    await panel.getByTestId("approval-deadline-save").click();
    await expect(panel.getByTestId("approval-deadline")).toHaveText("never");
    await owner.reload();
    await expect(owner.getByTestId("approval-deadline")).toHaveText("never");
    await expect(owner.getByTestId("approval-deadline-select")).toHaveValue("never");
    expect((await readSettings(owner.request, slug)).approvalDeadlineSec).toBeNull();

    // The boundary refuses what the select never offers, with a message that says why.
    const tooShort = await owner.request.patch(`/api/workspaces/${slug}/approval-settings`, {
      headers: sameOrigin,
      data: { approvalDeadlineSec: 5 },
    });
    expect(tooShort.status()).toBe(400);
    expect(((await tooShort.json()) as { error: { message: string } }).error.message).toMatch(/at least 30 seconds/);
    expect((await readSettings(owner.request, slug)).approvalDeadlineSec).toBeNull();

    // The viewer reads the same settings, without controls, and the API refuses a change.
    await viewer.goto(`/w/${slug}`);
    await expect(viewer.getByTestId("workspace-role")).toHaveText("viewer");
    await expect(viewer.getByTestId("approval-deadline")).toHaveText("never");
    await expect(viewer.getByTestId("approval-deadline-select")).toHaveCount(0);
    await expect(viewer.getByTestId("approval-deadline-save")).toHaveCount(0);
    await expect(viewer.getByTestId("revoke-rule-button")).toHaveCount(0);
    expect((await readSettings(viewer.request, slug)).approvalDeadlineSec).toBeNull();
    const refused = await viewer.request.patch(`/api/workspaces/${slug}/approval-settings`, {
      headers: sameOrigin,
      data: { approvalDeadlineSec: 600 },
    });
    expect(refused.status()).toBe(403);
    expect((await readSettings(owner.request, slug)).approvalDeadlineSec).toBeNull();

    // Someone outside a workspace learns nothing about it.
    const hidden = await createWorkspace(owner, `Private ${stamp}`);
    expect((await viewer.request.get(`/api/workspaces/${hidden.slug}/approval-settings`)).status()).toBe(404);
    const outside = await viewer.request.patch(`/api/workspaces/${hidden.slug}/approval-settings`, {
      headers: sameOrigin,
      data: { approvalDeadlineSec: null },
    });
    expect(outside.status()).toBe(404);
  } finally {
    await owner.context().close();
    await viewer.context().close();
  }
});

test("'Allow and remember' for the workspace stores a rule: members see it, only an owner revokes it", async ({
  browser,
}) => {
  test.setTimeout(240_000);
  const stamp = Date.now().toString(36);
  const ownerName = `Rita ${stamp}`;
  const ownerEmail = uniqueEmail("rita");
  const owner = await signedInPage(browser, ownerEmail, ownerName);
  const viewer = await signedInPage(browser, uniqueEmail("vera"), `Vera ${stamp}`);
  try {
    const { slug } = await createWorkspace(owner, `Rules ${stamp}`, { page: viewer, role: "viewer" });
    // The sidecar reads the deadline for every question: with "never" the cards have no clock.
    const never = await owner.request.put(`/api/workspaces/${slug}/approval-settings`, {
      headers: sameOrigin,
      data: { approvalDeadlineSec: null },
    });
    expect(never.status(), await never.text()).toBe(200);

    await owner.goto(`/w/${slug}`);
    await startSession(owner, "default");

    // The demo tour asks for a Write (or an Edit), then its Bash command; remember the Bash one.
    await sendPrompt(owner, "tour");
    let bash: Locator | undefined;
    for (let i = 0; i < 5 && bash === undefined; i++) {
      const card = pendingCard(owner).first();
      await expect(card).toBeVisible({ timeout: 45_000 });
      await expect(card.getByTestId("approval-countdown")).toHaveText("no deadline");
      // Pinned by id: the session view drops a card once it is decided.
      const pinned = owner.locator(
        `[data-testid="approval-card"][data-approval-id="${await card.getAttribute("data-approval-id")}"]`,
      );
      if ((await pinned.getAttribute("data-tool")) === "Bash") {
        bash = pinned;
        break;
      }
      await pinned.getByTestId("approve-button").click();
      await expect(pinned.and(pendingCard(owner))).toHaveCount(0);
    }
    if (bash === undefined) throw new Error("no Bash approval arrived");
    await expect(bash.getByTestId("approve-remember-button")).toBeVisible();
    const scope = bash.getByTestId("approve-remember-scope");
    const options = bash.getByTestId("approve-remember-option");
    if ((await options.count()) > 0) {
      // Several suggestions: take the first one that can be a workspace rule.
      const values = await options
        .locator("option")
        .evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value));
      for (const value of values) {
        await options.selectOption(value);
        if ((await scope.count()) > 0) break;
      }
    }
    await scope.selectOption("workspace");
    await bash.getByTestId("approve-remember-button").click();
    await expect(bash.and(pendingCard(owner))).toHaveCount(0);
    await expect(owner.getByTestId("turn-end")).toHaveCount(1, { timeout: 45_000 });

    const stored = await readSettings(owner.request, slug);
    expect(stored.rules.length).toBeGreaterThan(0);
    expect(stored.rules.every((r) => r.toolName === "Bash" && r.createdBy?.email === ownerEmail)).toBe(true);
    const labels = stored.rules.map((r) => (r.ruleContent ? `${r.toolName}(${r.ruleContent})` : r.toolName));

    // The viewer sees the rules and who remembered them, but cannot revoke.
    await viewer.goto(`/w/${slug}`);
    await expect(viewer.getByTestId("permission-rule")).toHaveCount(labels.length);
    const seen = viewer.locator(`[data-testid="permission-rule"][data-rule="${labels[0]}"]`);
    await expect(seen).toContainText(labels[0]!);
    await expect(seen).toContainText(ownerName);
    await expect(viewer.getByTestId("revoke-rule-button")).toHaveCount(0);
    const refused = await viewer.request.delete(
      `/api/workspaces/${slug}/approval-settings/rules/${stored.rules[0]!.id}`,
      { headers: sameOrigin },
    );
    expect(refused.status()).toBe(403);

    // A rule id never reaches across workspaces, not even the owner's own.
    const otherWs = await createWorkspace(owner, `Elsewhere ${stamp}`);
    const across = await owner.request.delete(
      `/api/workspaces/${otherWs.slug}/approval-settings/rules/${stored.rules[0]!.id}`,
      { headers: sameOrigin },
    );
    expect(across.status()).toBe(404);
    expect((await readSettings(owner.request, slug)).rules).toHaveLength(labels.length);

    // The owner revokes them all through the panel, confirming each.
    await owner.goto(`/w/${slug}`);
    const panel = owner.getByTestId("approval-settings");
    await expect(panel.getByTestId("approval-deadline")).toHaveText("never");
    owner.on("dialog", (dialog) => void dialog.accept());
    for (const [n, label] of labels.entries()) {
      const row = panel.locator(`[data-testid="permission-rule"][data-rule="${label}"]`);
      await expect(row).toBeVisible();
      await row.getByTestId("revoke-rule-button").click();
      await expect(row).toHaveCount(0);
      await expect(panel.getByTestId("permission-rule")).toHaveCount(labels.length - n - 1);
    }
    await owner.reload();
    await expect(owner.getByTestId("permission-rule")).toHaveCount(0);
    await expect(owner.getByTestId("approval-settings")).toContainText("No remembered rules");
    expect((await readSettings(owner.request, slug)).rules).toEqual([]);

    // A rule that is gone (or belongs elsewhere) is not found.
    const again = await owner.request.delete(`/api/workspaces/${slug}/approval-settings/rules/${stored.rules[0]!.id}`, {
      headers: sameOrigin,
    });
    expect(again.status()).toBe(404);
  } finally {
    await owner.context().close();
    await viewer.context().close();
  }
});
