/**
 * Who may create an account. The first account of an empty instance always may (and becomes its
 * admin); after that `CONDUIT_SIGNUP` decides: `open` lets anyone sign up, `invite` (the default)
 * only people holding an invitation, `closed` only people holding an invitation made by an admin
 * (workspace owners cannot bring new people in). Pure.
 */

export const SignupPolicy = { invite: "invite", open: "open", closed: "closed" } as const;
export type SignupPolicy = (typeof SignupPolicy)[keyof typeof SignupPolicy];

/** What a sign-up attempt is allowed, and the message when it is not. */
export type SignupDecision = { allowed: true; isAdmin: boolean } | { allowed: false; message: string };

export const inviteOnlyMessage = "This Conduit is invite-only. Ask an admin or a workspace owner for an invitation link.";
export const closedMessage = "Sign-up is closed on this Conduit. Ask an admin for an invitation link.";

/**
 * Decides a sign-up. `userCount` is the number of accounts (read in the same transaction as the
 * insert, so two first sign-ups cannot both become admin); `invited` is true when the person
 * holds a valid invitation for this email.
 */
export function decideSignup(input: { policy: SignupPolicy; userCount: number; invited: boolean }): SignupDecision {
  if (input.userCount === 0) return { allowed: true, isAdmin: true };
  if (input.invited || input.policy === SignupPolicy.open) return { allowed: true, isAdmin: false };
  return { allowed: false, message: input.policy === SignupPolicy.closed ? closedMessage : inviteOnlyMessage };
}

/** Whether someone who is not an admin may create invitations that bring in new accounts. */
export function ownersMayInvite(policy: SignupPolicy): boolean {
  return policy !== SignupPolicy.closed;
}

/** What the sign-up page shows: the form (first account or open) or why there is none. */
export function signupPageState(policy: SignupPolicy, userCount: number): { kind: "first" } | { kind: "open" } | { kind: "refused"; message: string } {
  if (userCount === 0) return { kind: "first" };
  if (policy === SignupPolicy.open) return { kind: "open" };
  return { kind: "refused", message: policy === SignupPolicy.closed ? closedMessage : inviteOnlyMessage };
}
