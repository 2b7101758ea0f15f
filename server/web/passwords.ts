import argon2 from "argon2";

/** Minimum rules for a password; the message says what is missing. */
export function checkPasswordStrength(password: string, email?: string): string | undefined {
  if (password.length < 10) return "Use at least 10 characters.";
  if (password.length > 256) return "Use at most 256 characters.";
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((re) => re.test(password)).length;
  if (classes < 2 && password.length < 16) {
    return "Mix letters with digits or symbols, or use at least 16 characters.";
  }
  if (new Set(password).size < 4) return "Use more different characters.";
  const local = email?.split("@")[0]?.toLowerCase();
  if (local && local.length >= 4 && password.toLowerCase().includes(local)) {
    return "Do not use your email name in the password.";
  }
  return undefined;
}

/** argon2id with the library's current defaults (memory-hard, 64 MiB, 3 passes). */
export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, { type: argon2.argon2id });
}

/** Constant-time verification; a malformed hash counts as a mismatch. */
export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}
