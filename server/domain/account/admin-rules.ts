/**
 * What an administrator may do to an account. Conduit always keeps one enabled administrator:
 * the last one can be neither unmade nor disabled, and nobody disables their own account (an
 * admin who wants out asks another admin). Pure.
 */

/** The changes an admin makes to an account from the admin pages. */
export const AccountChange = {
  grantAdmin: "grant-admin",
  revokeAdmin: "revoke-admin",
  disable: "disable",
  enable: "enable",
} as const;
export type AccountChange = (typeof AccountChange)[keyof typeof AccountChange];

/** The account being changed, as far as the rules need it. */
export interface AccountFacts {
  id: string;
  isAdmin: boolean;
  disabled: boolean;
}

/**
 * Why `actorId` may not make `change` to `target`, in words for the admin page; undefined when
 * allowed. `enabledAdminCount` counts enabled administrators, the target included if it is one.
 */
export function refuseAccountChange(input: {
  actorId: string;
  target: AccountFacts;
  change: AccountChange;
  enabledAdminCount: number;
}): string | undefined {
  const { actorId, target, change, enabledAdminCount } = input;
  const isLastAdmin = target.isAdmin && !target.disabled && enabledAdminCount <= 1;
  switch (change) {
    case AccountChange.revokeAdmin:
      if (isLastAdmin) return "This is the last administrator: make someone else an administrator first.";
      return undefined;
    case AccountChange.disable:
      if (target.id === actorId) return "You cannot disable your own account.";
      if (isLastAdmin) return "This is the last administrator: make someone else an administrator first.";
      return undefined;
    case AccountChange.grantAdmin:
      if (target.disabled) return "Enable this account before making it an administrator.";
      return undefined;
    case AccountChange.enable:
      return undefined;
  }
}
