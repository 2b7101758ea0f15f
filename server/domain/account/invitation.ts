/**
 * Invitation rules: the lifetime a creator may choose, the status of a stored invitation at a
 * given time, and which statuses can still be used or revoked. Pure, clock passed in.
 */

export const InvitationStatus = { pending: "pending", used: "used", expired: "expired", revoked: "revoked" } as const;
export type InvitationStatus = (typeof InvitationStatus)[keyof typeof InvitationStatus];

export const defaultInvitationDays = 7;
export const minInvitationDays = 1;
export const maxInvitationDays = 30;

/** The fields of a stored invitation that decide its status. */
export interface InvitationState {
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
}

/** Used and revoked are final; otherwise an invitation is pending until it expires. */
export function invitationStatusOf(row: InvitationState, now: Date): InvitationStatus {
  if (row.usedAt) return InvitationStatus.used;
  if (row.revokedAt) return InvitationStatus.revoked;
  if (row.expiresAt.getTime() <= now.getTime()) return InvitationStatus.expired;
  return InvitationStatus.pending;
}

/** When an invitation made at `now` for `days` days expires; days outside 1–30 are refused. */
export function invitationExpiry(now: Date, days: number = defaultInvitationDays): Date {
  if (!Number.isInteger(days) || days < minInvitationDays || days > maxInvitationDays) {
    throw new RangeError(`An invitation lasts ${minInvitationDays} to ${maxInvitationDays} days.`);
  }
  return new Date(now.getTime() + days * 24 * 3600_000);
}

/** What a person opening a link that cannot be used is told, per status. */
export function unusableInvitationMessage(status: Exclude<InvitationStatus, "pending"> | "unknown"): string {
  switch (status) {
    case InvitationStatus.used:
      return "This invitation link has already been used. If that was you, sign in; otherwise ask for a new invitation.";
    case InvitationStatus.expired:
      return "This invitation link has expired. Ask the person who invited you for a new one.";
    case InvitationStatus.revoked:
      return "This invitation link was revoked. Ask the person who invited you for a new one.";
    default:
      return "This invitation link is not valid. Check that you copied all of it, or ask for a new one.";
  }
}
