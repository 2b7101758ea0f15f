/**
 * The account page: a password change signs out every other browser of the account but keeps
 * this one; the old password stops working. Sign-out voids a copied cookie. Renaming shows.
 */
import path from "node:path";
import Database from "better-sqlite3";
import { expect, test, password, sameOrigin, signInViaUi, signUpViaApi, uniqueEmail, type APIRequestContext } from "./fixtures";

const changed = "Brand-new-pass-91";

test("changing the password signs out the other browser, keeps this one, and replaces the old password", async ({ browser }) => {
  // Three browsers, six argon2 password checks and the suite's first page loads: a loaded CI
  // machine took over 60 s (the clean-clone run of b5c7052, load ~16).
  test.setTimeout(150_000);
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
  // the other browser's cookie is void: its open page goes to sign-in by itself (its socket
  // closed by the sidecar), and so does its next visit
  await expect(elsewhere).toHaveURL(/\/signin/, { timeout: 15_000 });
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
  // the copy's open page hears it (the sidecar closes its socket) and goes to sign-in by itself
  await expect(copied).toHaveURL(/\/signin/, { timeout: 15_000 });
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

/** One credentials sign-in through next-auth's endpoint; returns the error it reports, if any. */
async function tryPassword(request: APIRequestContext, email: string, pass: string): Promise<string | undefined> {
  const { csrfToken } = (await (await request.get("/api/auth/csrf")).json()) as { csrfToken: string };
  const res = await request.post("/api/auth/callback/credentials", { headers: sameOrigin, form: { csrfToken, email, password: pass, json: "true" }, maxRedirects: 0 });
  const { url } = (await res.json()) as { url: string };
  return new URL(url).searchParams.get("error") ?? undefined;
}

test("repeated wrong passwords are slowed down with the time to wait, not locked", async ({ playwright, baseURL }) => {
  const request = await playwright.request.newContext({ baseURL });
  const email = uniqueEmail("acct-throttle");
  await signUpViaApi(request, email);
  const errors: string[] = [];
  // delays double from the fourth failure on; within a few tries one lands inside its delay
  for (let i = 0; i < 10 && !errors.some((e) => e.startsWith("Too many")); i++) errors.push((await tryPassword(request, email, `wrong-password-${i}`))!);
  expect(errors.slice(0, 3)).toEqual(["Wrong email or password.", "Wrong email or password.", "Wrong email or password."]);
  expect(errors.at(-1)).toMatch(/^Too many failed sign-in attempts\. Try again in \d+ s\.$/);
  await request.dispose();
});

test("a disabled account is told so only after the right password", async ({ playwright, baseURL }) => {
  const request = await playwright.request.newContext({ baseURL });
  const email = uniqueEmail("acct-disabled");
  await signUpViaApi(request, email);
  // the admin pages disable accounts; here the e2e server's database is written directly
  const db = new Database(path.join("test-results", "e2e-data", "conduit.db"));
  try {
    expect(db.prepare("UPDATE User SET disabledAt = ? WHERE email = ?").run(new Date().toISOString().replace("Z", "+00:00"), email).changes).toBe(1);
  } finally {
    db.close();
  }
  expect(await tryPassword(request, email, "not-the-password-1")).toBe("Wrong email or password.");
  expect(await tryPassword(request, email, password)).toBe("This account is disabled. Ask an admin.");
  await request.dispose();
});
