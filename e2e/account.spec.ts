/**
 * The account page: a password change signs out every other browser of the account but keeps
 * this one; the old password stops working. Sign-out voids a copied cookie. Renaming shows.
 */
import { expect, test } from "@playwright/test";
import { password, signInViaUi, signUpViaApi, uniqueEmail } from "./fixtures";

const changed = "Brand-new-pass-91";

test("changing the password signs out the other browser, keeps this one, and replaces the old password", async ({ browser }) => {
  const email = uniqueEmail("acct");
  const here = await (await browser.newContext()).newPage();
  await signUpViaApi(here.context().request, email, "Ann");
  await signInViaUi(here, email);
  const elsewhere = await (await browser.newContext()).newPage();
  await signInViaUi(elsewhere, email);

  await here.getByTestId("nav-account").click();
  await expect(here).toHaveURL(/\/account$/);
  await expect(here.getByTestId("account-spend")).toContainText("$0.00");
  await expect(here.getByTestId("account-budget")).toHaveText("no monthly budget set");

  // a wrong current password changes nothing
  await here.getByTestId("account-password-current").fill("not-my-password-1");
  await here.getByTestId("account-password-new").fill(changed);
  await here.getByTestId("account-password-save").click();
  await expect(here.getByTestId("account-password-error")).toHaveText("The current password is wrong.");
  // a weak new password is refused with the rule
  await here.getByTestId("account-password-current").fill(password);
  await here.getByTestId("account-password-new").fill("aaaaaaaaaaaa");
  await here.getByTestId("account-password-save").click();
  await expect(here.getByTestId("account-password-error")).toContainText("Password too weak");

  await here.getByTestId("account-password-current").fill(password);
  await here.getByTestId("account-password-new").fill(changed);
  await here.getByTestId("account-password-save").click();
  await expect(here.getByTestId("account-password-saved")).toBeVisible();

  // this browser stays signed in (its cookie was re-issued)
  await here.goto("/workspaces");
  await expect(here.getByTestId("current-user")).toContainText("Ann");
  // the other browser's cookie is void
  await elsewhere.goto("/workspaces");
  await expect(elsewhere).toHaveURL(/\/signin/);

  // old password fails, new one works
  const fresh = await (await browser.newContext()).newPage();
  await fresh.goto("/signin");
  await fresh.getByTestId("signin-email").fill(email);
  await fresh.getByTestId("signin-password").fill(password);
  await fresh.getByTestId("signin-submit").click();
  await expect(fresh.getByTestId("signin-error")).toHaveText("Wrong email or password.");
  await signInViaUi(fresh, email, changed);
});

test("signing out voids the cookie, also a copy of it", async ({ browser }) => {
  const email = uniqueEmail("acct-out");
  const page = await (await browser.newContext()).newPage();
  await signUpViaApi(page.context().request, email);
  await signInViaUi(page, email);
  const copy = await browser.newContext({ storageState: await page.context().storageState() });
  const copied = await copy.newPage();
  await copied.goto("/workspaces");
  await expect(copied.getByTestId("current-user")).toBeVisible();

  await page.getByTestId("signout").click();
  await expect(page).toHaveURL(/\/signin/);
  await copied.goto("/workspaces");
  await expect(copied).toHaveURL(/\/signin/);
  const api = await copy.request.get("/api/account");
  expect(api.status()).toBe(401);
});

test("renaming the account shows the new name in the header", async ({ browser }) => {
  const email = uniqueEmail("acct-name");
  const page = await (await browser.newContext()).newPage();
  await signUpViaApi(page.context().request, email, "Before");
  await signInViaUi(page, email);
  await page.goto("/account");
  await page.getByTestId("account-name").fill("After Rename");
  await page.getByTestId("account-name-save").click();
  await expect(page.getByTestId("current-user")).toContainText("After Rename");
});
