import { expect, test, createWorkspace, sameOrigin, sendPrompt, signedInPage, signUpViaApi, uniqueEmail, startSessionInNewWorkspace } from "./fixtures";

test("a demo reply in Markdown shows a table, checkboxes and highlighted code", async ({ browser }) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const page = await signedInPage(browser, uniqueEmail("mia"), `Mia ${stamp}`);
  try {
    // shiki (its themes name "github-light") is fetched only once a code block appears
    const scripts: { url: string; shiki: Promise<boolean> }[] = [];
    page.on("response", (res) => {
      if (res.url().endsWith(".js"))
        scripts.push({
          url: res.url(),
          shiki: res.text().then(
            (body) => body.includes('"github-light"'),
            () => false,
          ),
        });
    });
    const shikiLoaded = async () => (await Promise.all(scripts.map((s) => s.shiki))).some(Boolean);
    const ws = await startSessionInNewWorkspace(page, `Markdown ${stamp}`, "default");

    await sendPrompt(page, "hello");
    await expect(page.getByTestId("turn-end")).toHaveCount(1, { timeout: 30_000 });
    expect(scripts.length).toBeGreaterThan(0);
    expect(await shikiLoaded()).toBe(false);

    await sendPrompt(page, "Show me some markdown please");
    const reply = page
      .locator('[data-testid="message-assistant"][data-streaming="false"]')
      .filter({ hasText: "Next steps" });
    await expect(reply).toHaveCount(1, { timeout: 30_000 });

    // GFM table: a header row and three body rows, right-aligned last column
    const table = reply.locator("table");
    await expect(table.locator("thead th")).toHaveText(["Feature", "Where", "Ready"]);
    await expect(table.locator("tbody tr")).toHaveCount(3);
    await expect(table.locator("tbody tr").first().locator("td").last()).toHaveCSS("text-align", "right");
    await expect(table.locator("del")).toHaveText("Raw HTML");

    // GFM task list: real, read-only checkboxes, two of three ticked
    const boxes = reply.locator('input[type="checkbox"]');
    await expect(boxes).toHaveCount(3);
    await expect(boxes.nth(0)).toBeChecked();
    await expect(boxes.nth(1)).toBeChecked();
    await expect(boxes.nth(2)).not.toBeChecked();
    await expect(boxes.nth(2)).toBeDisabled();

    // the code block, highlighted once shiki has loaded; the text is unchanged
    const code = reply.locator("pre code");
    await expect(code).toHaveAttribute("data-highlighted", "true");
    expect(await shikiLoaded()).toBe(true);
    await expect(code).toContainText("return costs.reduce((sum, c) => sum + c, 0); // in USD");
    const keyword = code.locator("span", { hasText: /^export$/ });
    await expect(keyword).toHaveCount(1);
    const comment = code.locator("span", { hasText: "// in USD" });
    const colours = await Promise.all([keyword, comment].map((l) => l.evaluate((el) => getComputedStyle(el).color)));
    expect(colours[0]).not.toBe(colours[1]);

    // the bare URL became a link that opens in a new tab without opener or referrer
    const link = reply.locator('a[href="https://github.github.com/gfm/"]');
    await expect(link).toHaveAttribute("target", "_blank");
    await expect(link).toHaveAttribute("rel", "noopener noreferrer");

    // the session list names the mode instead of its raw value
    await page.goto(`/w/${ws.slug}`);
    await expect(page.getByTestId("session-row").first().locator("td[data-mode]")).toHaveText("Ask before edits");
  } finally {
    await page.context().close();
  }
});

test("removing a member asks first; a failed request leaves the members and budget buttons usable", async ({
  browser,
}) => {
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("oli"), `Oli ${stamp}`);
  try {
    const ws = await createWorkspace(owner, `Members ${stamp}`);
    const guest = uniqueEmail("gus");
    await signUpViaApi(owner.request, guest, `Gus ${stamp}`);
    const added = await owner.request.post(`/api/workspaces/${ws.slug}/members`, {
      headers: sameOrigin,
      data: { email: guest, role: "viewer" },
    });
    expect(added.status()).toBe(201);
    await owner.goto(`/w/${ws.slug}`);
    const row = owner.getByTestId("member-row").filter({ hasText: guest });

    // asks first; Cancel keeps the member
    await row.getByTestId("member-remove").click();
    await expect(row.getByRole("group")).toContainText(`Remove Gus ${stamp}?`);
    await row.getByTestId("member-remove-cancel").click();
    await expect(row.getByTestId("member-remove")).toBeVisible();

    // the request fails on the network: an error, and the button works again
    await owner.route("**/api/workspaces/*/members/*", (route) => route.abort("internetdisconnected"));
    await row.getByTestId("member-remove").click();
    await row.getByTestId("member-remove-confirm").click();
    await expect(owner.getByTestId("members-error")).toContainText("could not be reached");
    await expect(row.getByTestId("member-remove-confirm")).toBeEnabled();
    await owner.unroute("**/api/workspaces/*/members/*");

    // the budget's Save recovers the same way
    await owner.route("**/api/workspaces/*/budget", (route) => route.abort("internetdisconnected"));
    await owner.getByTestId("budget-input").fill("3");
    await owner.getByTestId("budget-save").click();
    await expect(owner.getByRole("alert").filter({ hasText: "could not be reached" })).toBeVisible();
    await expect(owner.getByTestId("budget-save")).toBeEnabled();
    await owner.unroute("**/api/workspaces/*/budget");

    // confirmed: the member is gone
    await row.getByTestId("member-remove-confirm").click();
    await expect(owner.getByTestId("member-row").filter({ hasText: guest })).toHaveCount(0);
    await expect(owner.getByTestId("member-row")).toHaveCount(1);
  } finally {
    await owner.context().close();
  }
});

test("bad history filters are named; unknown pages get the app's not-found page", async ({ browser }) => {
  const stamp = Date.now().toString(36);
  const page = await signedInPage(browser, uniqueEmail("hal"), `Hal ${stamp}`);
  try {
    await page.goto("/history?from=garbage&status=zombie");
    await expect(page.getByTestId("history-filter-error")).toContainText("“garbage” is not one");
    await expect(page.getByTestId("history-filter-error")).toContainText("zombie");
    await expect(page.getByTestId("history-list")).toHaveCount(0);
    await page.getByRole("link", { name: "clear all filters" }).click();
    await expect(page).toHaveURL(/\/history$/);
    await expect(page.getByTestId("history-filter-error")).toHaveCount(0);

    const missing = await page.goto(`/no-such-page-${stamp}`);
    expect(missing?.status()).toBe(404);
    await expect(page.getByTestId("not-found")).toContainText("Page not found");
  } finally {
    await page.context().close();
  }
});
