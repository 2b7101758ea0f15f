import { expect, test, password, sameOrigin, signInViaUi, signUpViaApi, uniqueEmail } from "./fixtures";

test("sign up, sign out, sign in, create a workspace, add a viewer who cannot manage members", async ({ page, browser, request }, testInfo) => {
  const owner = uniqueEmail("owner");
  const viewer = uniqueEmail("viewer");

  await page.goto("/");
  await expect(page).toHaveURL(/\/signin$/);
  await expect(page.getByTestId("demo-banner")).toBeVisible();

  await page.goto("/signup");
  await page.getByTestId("signup-email").fill(owner);
  await page.getByTestId("signup-password").fill(password);
  await page.getByTestId("signup-submit").click();
  await expect(page).toHaveURL(/\/workspaces$/);
  await expect(page.getByTestId("current-user")).toBeVisible();

  await page.getByTestId("signout").click();
  await expect(page).toHaveURL(/\/signin/);
  await page.goto("/workspaces");
  await expect(page).toHaveURL(/\/signin/);

  await signInViaUi(page, owner);

  const name = `Project ${Date.now().toString(36)}`;
  await page.getByTestId("workspace-create-name").fill(name);
  await page.getByTestId("workspace-create-submit").click();
  await expect(page).toHaveURL(/\/w\/project-/);
  await expect(page.getByRole("heading", { name })).toBeVisible();
  const workspaceUrl = page.url();
  const slug = new URL(workspaceUrl).pathname.split("/").pop()!;

  await page.goto("/workspaces");
  await expect(page.getByTestId("workspace-link").filter({ hasText: name })).toBeVisible();
  const row = page.getByTestId("workspace-list").locator("li").filter({ hasText: name });
  await expect(row.getByTestId("workspace-activity")).toHaveText("no sessions yet");
  await page.getByTestId("workspace-link").filter({ hasText: name }).click();
  await expect(page).toHaveURL(workspaceUrl);

  await signUpViaApi(request, viewer, "Val Viewer");
  await page.getByTestId("member-add-email").fill(viewer);
  await page.getByTestId("member-add-role").selectOption("viewer");
  await page.getByTestId("member-add-submit").click();
  const viewerRow = page.getByTestId("member-row").filter({ hasText: viewer });
  await expect(viewerRow).toHaveAttribute("data-role", "viewer");
  await expect(page.getByTestId("member-row")).toHaveCount(2);

  const shot = testInfo.outputPath("workspace-page.png");
  await page.screenshot({ path: shot, fullPage: true });
  await testInfo.attach("workspace-page", { path: shot, contentType: "image/png" });

  const viewerContext = await browser.newContext();
  try {
    const viewerPage = await viewerContext.newPage();
    await signInViaUi(viewerPage, viewer);
    await viewerPage.getByTestId("workspace-link").filter({ hasText: name }).click();
    await expect(viewerPage.getByTestId("workspace-role")).toHaveText("viewer");
    await expect(viewerPage.getByTestId("member-row")).toHaveCount(2);
    await expect(viewerPage.getByTestId("members-readonly")).toBeVisible();
    await expect(viewerPage.getByTestId("member-add-email")).toHaveCount(0);

    // The server refuses too, not just the UI.
    const add = await viewerPage.request.post(`/api/workspaces/${slug}/members`, { headers: sameOrigin, data: { email: owner, role: "viewer" } });
    expect(add.status()).toBe(403);
    const body = (await add.json()) as { error: { code: string } };
    expect(body.error.code).toBe("forbidden");
  } finally {
    await viewerContext.close();
  }
});

test("clear errors for a wrong password, a taken email and a weak password", async ({ page, request }) => {
  const email = uniqueEmail("errors");
  await signUpViaApi(request, email);

  await page.goto("/signin");
  await page.getByTestId("signin-email").fill(email);
  await page.getByTestId("signin-password").fill("not-the-password-1");
  await page.getByTestId("signin-submit").click();
  await expect(page.getByTestId("signin-error")).toHaveText("Wrong email or password.");

  await page.goto("/signup");
  await page.getByTestId("signup-email").fill(email);
  await page.getByTestId("signup-password").fill(password);
  await page.getByTestId("signup-submit").click();
  await expect(page.getByTestId("signup-error")).toContainText("already exists");

  await page.getByTestId("signup-email").fill(uniqueEmail("weak"));
  await page.getByTestId("signup-password").fill("aaaaaaaaaa");
  await page.getByTestId("signup-submit").click();
  await expect(page.getByTestId("signup-error")).toContainText("Password too weak");
});

test("a non-member gets 404 for a workspace and its members", async ({ browser, request }) => {
  const owner = uniqueEmail("own2");
  const stranger = uniqueEmail("stranger");
  await signUpViaApi(request, owner);
  await signUpViaApi(request, stranger);

  const ownerContext = await browser.newContext();
  const strangerContext = await browser.newContext();
  try {
    const ownerPage = await ownerContext.newPage();
    await signInViaUi(ownerPage, owner);
    const created = await ownerPage.request.post("/api/workspaces", { headers: sameOrigin, data: { name: "Private" } });
    expect(created.status()).toBe(201);
    const { data } = (await created.json()) as { data: { slug: string } };

    const strangerPage = await strangerContext.newPage();
    await signInViaUi(strangerPage, stranger);
    expect((await strangerPage.request.get(`/api/workspaces/${data.slug}`)).status()).toBe(404);
    expect((await strangerPage.request.post(`/api/workspaces/${data.slug}/members`, { headers: sameOrigin, data: { email: stranger, role: "owner" } })).status()).toBe(404);
    const page = await strangerPage.goto(`/w/${data.slug}`);
    expect(page?.status()).toBe(404);

    const escape = await ownerPage.request.post("/api/workspaces", { headers: sameOrigin, data: { name: "Escape", directory: "../../etc" } });
    expect(escape.status()).toBe(400);
  } finally {
    await ownerContext.close();
    await strangerContext.close();
  }
});
