import { describe, expect, it } from "vitest";
import { decideGitHubSignIn, verifiedEmailsOf, type GitHubEmail } from "./github-sign-in";

const email = (address: string, verified: boolean, primary = false): GitHubEmail => ({ email: address, verified, primary });

describe("verifiedEmailsOf", () => {
  it("keeps verified emails, lowercased, primary first", () => {
    expect(verifiedEmailsOf([email("B@x.test", true), email("a@x.test", false), email("P@x.test", true, true)])).toEqual(["p@x.test", "b@x.test"]);
  });
});

describe("decideGitHubSignIn", () => {
  const base = { userCount: 3, policy: "invite" as const, accounts: [] };

  it("links an existing account through a verified email", () => {
    const decision = decideGitHubSignIn({ ...base, emails: [email("me@x.test", true, true)], accounts: [{ email: "me@x.test", disabled: false }] });
    expect(decision).toEqual({ kind: "link", email: "me@x.test" });
  });

  it("never links through an email GitHub has not verified", () => {
    const decision = decideGitHubSignIn({
      ...base,
      emails: [email("victim@x.test", false, true), email("me@y.test", true)],
      accounts: [{ email: "victim@x.test", disabled: false }],
    });
    // the unverified match is ignored; a new account for the verified email needs sign-up rights
    expect(decision.kind).toBe("refuse");
    expect(decideGitHubSignIn({ ...base, policy: "open", emails: [email("victim@x.test", false, true)], accounts: [{ email: "victim@x.test", disabled: false }] })).toMatchObject({
      kind: "refuse",
      reason: "no_verified_email",
    });
  });

  it("refuses a disabled account", () => {
    expect(decideGitHubSignIn({ ...base, emails: [email("me@x.test", true)], accounts: [{ email: "me@x.test", disabled: true }] })).toMatchObject({ kind: "refuse", reason: "disabled" });
  });

  it("creates the first account as admin, others only when the policy or an invitation allows", () => {
    const emails = [email("new@x.test", true, true)];
    expect(decideGitHubSignIn({ ...base, userCount: 0, emails })).toEqual({ kind: "create", email: "new@x.test", isAdmin: true, invited: false });
    expect(decideGitHubSignIn({ ...base, emails })).toMatchObject({ kind: "refuse", reason: "signup_refused", message: expect.stringMatching(/invite-only/) });
    expect(decideGitHubSignIn({ ...base, policy: "open", emails })).toEqual({ kind: "create", email: "new@x.test", isAdmin: false, invited: false });
    expect(decideGitHubSignIn({ ...base, policy: "closed", emails, invitedEmail: "new@x.test" })).toEqual({ kind: "create", email: "new@x.test", isAdmin: false, invited: true });
  });

  it("accepts an invitation only for a verified email of the GitHub account", () => {
    const emails = [email("primary@x.test", true, true), email("Work@y.test", true), email("other@z.test", false)];
    expect(decideGitHubSignIn({ ...base, emails, invitedEmail: "work@y.test" })).toEqual({ kind: "create", email: "work@y.test", isAdmin: false, invited: true });
    expect(decideGitHubSignIn({ ...base, emails, invitedEmail: "other@z.test" })).toMatchObject({ kind: "refuse", message: expect.stringMatching(/other@z.test/) });
  });
});
