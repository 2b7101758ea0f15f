/**
 * Whether a GitHub sign-in may link to, or create, a Conduit account. GitHub proves only the
 * emails it reports as verified (`/user/emails`), so an existing account is linked only through
 * one of those; a new account needs the same sign-up rights as a password sign-up. Pure.
 */
import { decideSignup, type SignupPolicy } from "./signup-policy";

/** One row of GitHub's `GET /user/emails`. */
export interface GitHubEmail {
  email: string;
  verified: boolean;
  primary: boolean;
}

export type GitHubSignInDecision =
  | { kind: "link"; email: string }
  | { kind: "create"; email: string; isAdmin: boolean; invited: boolean }
  | { kind: "refuse"; reason: "no_verified_email" | "disabled" | "signup_refused"; message: string };

/** The verified emails, lowercased, the primary first. */
export function verifiedEmailsOf(emails: readonly GitHubEmail[]): string[] {
  return [...emails]
    .filter((e) => e.verified === true && typeof e.email === "string" && e.email.includes("@"))
    .sort((a, b) => Number(b.primary) - Number(a.primary))
    .map((e) => e.email.trim().toLowerCase());
}

/**
 * Decides a GitHub sign-in. `accounts` are the Conduit accounts whose email is one of the
 * GitHub account's emails (verified or not: an unverified match must not link); `invitedEmail` is
 * the email of a valid invitation being accepted with GitHub, if any.
 */
export function decideGitHubSignIn(input: {
  emails: readonly GitHubEmail[];
  accounts: readonly { email: string; disabled: boolean }[];
  invitedEmail?: string;
  userCount: number;
  policy: SignupPolicy;
}): GitHubSignInDecision {
  const verified = verifiedEmailsOf(input.emails);
  if (verified.length === 0) {
    return { kind: "refuse", reason: "no_verified_email", message: "GitHub reports no verified email for this account. Verify your email on GitHub first." };
  }
  const accounts = new Map(input.accounts.map((a) => [a.email.toLowerCase(), a]));
  const linked = verified.find((email) => accounts.has(email));
  if (linked) {
    if (accounts.get(linked)?.disabled) return { kind: "refuse", reason: "disabled", message: "This account is disabled. Ask an admin." };
    return { kind: "link", email: linked };
  }
  const invited = input.invitedEmail?.toLowerCase();
  const email = invited && verified.includes(invited) ? invited : verified[0]!;
  const decision = decideSignup({ policy: input.policy, userCount: input.userCount, invited: email === invited });
  if (!decision.allowed) {
    const message =
      invited && email !== invited
        ? `The invitation is for ${invited}, which GitHub does not report as one of your verified emails.`
        : decision.message;
    return { kind: "refuse", reason: "signup_refused", message };
  }
  return { kind: "create", email, isAdmin: decision.isAdmin, invited: email === invited };
}
