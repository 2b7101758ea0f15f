import { expect, test, password, signInViaUi, signUpViaApi, uniqueEmail } from "./fixtures";

// Until React hydrates a page, its buttons have no handlers: a click does nothing (Sign out) and a
// form submits natively, as a GET of the same page with its fields in the URL. These pages are
// loaded with their JavaScript held back, which is what a slow network or a busy machine does for
// a moment on every load.

test("before the page's JavaScript runs, the sign-in form cannot submit its password into the URL", async ({ page }) => {
  await page.route("**/_next/static/**/*.js", (route) => route.abort());
  await page.goto("/signin");
  await expect(page.getByTestId("signin-submit")).toBeDisabled();
  await page.getByTestId("signin-email").fill("someone@example.test");
  await page.getByTestId("signin-password").fill(password);
  const navigated = page.waitForEvent("framenavigated", { timeout: 1_000 }).then(() => true, () => false);
  await page.getByTestId("signin-password").press("Enter");
  expect(await navigated).toBe(false);
  expect(page.url()).not.toContain(encodeURIComponent(password));
  expect(page.url()).toMatch(/\/signin$/);

  await page.goto("/signup");
  await expect(page.getByTestId("signup-submit")).toBeDisabled();

  await page.unroute("**/_next/static/**/*.js");
  await page.goto("/signin");
  await expect(page.getByTestId("signin-submit")).toBeEnabled();
});

test("Sign out, create a workspace and New session wait for the page's JavaScript instead of ignoring a click", async ({ page }) => {
  const email = uniqueEmail("early");
  await signUpViaApi(page.request, email);
  await signInViaUi(page, email);

  await page.route("**/_next/static/**/*.js", (route) => route.abort());
  await page.goto("/workspaces");
  await expect(page.getByTestId("current-user")).toBeVisible();
  await expect(page.getByTestId("signout")).toBeDisabled();
  await expect(page.getByTestId("workspace-create-submit")).toBeDisabled();
  await page.getByTestId("workspace-create-name").fill(`Early ${Date.now().toString(36)}`);
  await page.getByTestId("workspace-create-name").press("Enter");
  await expect(page).toHaveURL(/\/workspaces$/);

  await page.unroute("**/_next/static/**/*.js");
  await page.goto("/workspaces");
  await page.getByTestId("workspace-create-name").fill(`Early ${Date.now().toString(36)}`);
  await page.getByTestId("workspace-create-submit").click();
  await expect(page).toHaveURL(/\/w\/early-/);
  const workspaceUrl = page.url();

  await page.route("**/_next/static/**/*.js", (route) => route.abort());
  await page.goto(workspaceUrl);
  await expect(page.getByTestId("session-new")).toBeDisabled();
  await page.unroute("**/_next/static/**/*.js");
  await page.goto(workspaceUrl);
  await expect(page.getByTestId("session-new")).toBeEnabled();

  await page.getByTestId("signout").click();
  await expect(page).toHaveURL(/\/signin/);
});
