/**
 * Whether a socket that is already open may stay open. The handshake checks a session once; a
 * revocation made afterwards (a disabled account, a sign-out elsewhere, a membership removed)
 * must reach the sockets already open too. Leaving rooms one by one would leave the presence
 * list and the client's view of its subscriptions out of step, so a revoked socket is closed:
 * the browser then asks the web app, which sends it to sign-in or answers 404. Pure.
 */
import { isSessionCurrent, type AccountStanding } from "./session-validity";

/** Why an open socket is closed. */
export const RevocationReason = {
  /** The account no longer exists. */
  deleted: "deleted",
  /** An admin disabled the account. */
  disabled: "disabled",
  /** The account's session version moved on: sign-out, password change. */
  signedOut: "signed-out",
  /** The socket listens to a workspace (or one of its sessions) its user is no longer a member of. */
  notAMember: "not-a-member",
} as const;
export type RevocationReason = (typeof RevocationReason)[keyof typeof RevocationReason];

/** What is known about one open socket. */
export interface OpenSocketFacts {
  /** The account now; undefined when it was deleted. */
  account: AccountStanding | undefined;
  /** The session version the socket was opened with. */
  claimedVersion: number;
  /**
   * The workspaces whose facts reach the socket through its rooms; null for a room whose
   * workspace is unknown (its session is gone), which counts as a workspace it cannot see.
   */
  listensTo: readonly (string | null)[];
  /** The workspaces the user is a member of now (any role: viewers read). */
  memberOf: ReadonlySet<string>;
}

/** `undefined` when the socket may stay open, else the reason to close it. */
export function judgeOpenSocket(facts: OpenSocketFacts): RevocationReason | undefined {
  if (!facts.account) return RevocationReason.deleted;
  if (facts.account.disabledAt !== null) return RevocationReason.disabled;
  if (!isSessionCurrent(facts.account, facts.claimedVersion)) return RevocationReason.signedOut;
  for (const workspaceId of facts.listensTo) {
    if (workspaceId === null || !facts.memberOf.has(workspaceId)) return RevocationReason.notAMember;
  }
  return undefined;
}
