import { describe, expect, it } from "vitest";
import { closedMessage, decideSignup, inviteOnlyMessage, ownersMayInvite, signupPageState } from "./signup-policy";

describe("decideSignup", () => {
  it("lets the first account of an empty instance sign up as admin under every policy", () => {
    for (const policy of ["invite", "open", "closed"] as const) {
      expect(decideSignup({ policy, userCount: 0, invited: false })).toEqual({ allowed: true, isAdmin: true });
    }
  });

  it("refuses a second self sign-up unless the policy is open", () => {
    expect(decideSignup({ policy: "invite", userCount: 1, invited: false })).toEqual({ allowed: false, message: inviteOnlyMessage });
    expect(decideSignup({ policy: "closed", userCount: 5, invited: false })).toEqual({ allowed: false, message: closedMessage });
    expect(decideSignup({ policy: "open", userCount: 5, invited: false })).toEqual({ allowed: true, isAdmin: false });
  });

  it("lets an invited person in under every policy, never as admin", () => {
    for (const policy of ["invite", "open", "closed"] as const) {
      expect(decideSignup({ policy, userCount: 3, invited: true })).toEqual({ allowed: true, isAdmin: false });
    }
  });
});

describe("ownersMayInvite and the sign-up page", () => {
  it("only admins invite under closed", () => {
    expect(ownersMayInvite("invite")).toBe(true);
    expect(ownersMayInvite("open")).toBe(true);
    expect(ownersMayInvite("closed")).toBe(false);
  });

  it("shows the admin notice first, the form when open, the reason otherwise", () => {
    expect(signupPageState("closed", 0)).toEqual({ kind: "first" });
    expect(signupPageState("open", 2)).toEqual({ kind: "open" });
    expect(signupPageState("invite", 2)).toEqual({ kind: "refused", message: inviteOnlyMessage });
    expect(signupPageState("closed", 2)).toEqual({ kind: "refused", message: closedMessage });
  });
});
