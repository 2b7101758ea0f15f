/**
 * Whether a signed cookie (or socket token) still speaks for its user. A cookie is void once the
 * account is disabled or its session version has moved on (sign-out, password change, disable),
 * so revocation needs no list of cookies: one integer per user. Pure.
 */

/** The account fields that decide a cookie's validity. */
export interface AccountStanding {
  disabledAt: Date | null;
  sessionVersion: number;
}

/** The version a cookie carries in its `sv` claim; cookies from before versions existed carry none (0). */
export function sessionVersionOf(claims: { sv?: unknown } | null | undefined): number {
  return typeof claims?.sv === "number" && Number.isInteger(claims.sv) ? claims.sv : 0;
}

/** True while the account is enabled and the cookie's version is the current one. */
export function isSessionCurrent(account: AccountStanding, claimedVersion: number): boolean {
  return account.disabledAt === null && account.sessionVersion === claimedVersion;
}
