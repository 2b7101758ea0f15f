/**
 * The email-and-password check behind sign-in, timed the same whatever the email. An unknown
 * email, or an account without a password (GitHub only), is verified against a dummy argon2id
 * hash made once with the same parameters as real ones, so it costs one argon2 verification like
 * a known email with a wrong password: the answer's timing no longer tells which emails have
 * accounts (issue 38: 21–41 ms against 431–507 ms before). A disabled account is verified against
 * its own hash (the same cost) and is named disabled only to someone who knows its password.
 * Measured by `npm run bench -- signin-timing`.
 */
import { randomBytes } from "node:crypto";
import type { Db } from "@/server/db/client";
import { hashPassword, verifyPassword } from "@/server/web/passwords";

let dummy: Promise<string> | undefined;

/** The hash unknown emails are verified against: a random password's, made once per process. */
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(32).toString("base64url"));
  return dummy;
}

// Made when the module loads (the first sign-in need not wait for it).
void dummyPasswordHash().catch(() => {
  dummy = undefined;
});

export interface CheckedAccount {
  id: string;
  email: string;
  name: string;
}

/** `ok`, or why not: `wrong` (unknown email or wrong password, one answer for both) or `disabled`. */
export type CredentialVerdict = { ok: true; user: CheckedAccount } | { ok: false; reason: "wrong" | "disabled" };

/** Checks an email (already trimmed and lower-cased) and password against the accounts. */
export async function checkCredentials(db: Db, email: string, password: string): Promise<CredentialVerdict> {
  const user = await db.user.findUnique({
    where: { email },
    select: { id: true, email: true, name: true, passwordHash: true, disabledAt: true },
  });
  const hash = user?.passwordHash ?? (await dummyPasswordHash());
  const matches = await verifyPassword(hash, password);
  if (!user?.passwordHash || !matches) return { ok: false, reason: "wrong" };
  // only someone who knows the password learns that the account is disabled
  if (user.disabledAt) return { ok: false, reason: "disabled" };
  return { ok: true, user: { id: user.id, email: user.email, name: user.name } };
}
