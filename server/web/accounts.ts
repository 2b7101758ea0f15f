/** Sign-up. The first account of an instance becomes its admin; there is no default password. */
import { getDb } from "@/server/db/client";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { checkPasswordStrength, hashPassword } from "@/server/web/passwords";

export interface NewAccount {
  email: string;
  name?: string;
  password: string;
}

/** Creates an account; a taken email or a weak password is a clear error. */
export async function createAccount(input: NewAccount): Promise<{ id: string; email: string; isAdmin: boolean }> {
  const email = input.email.trim().toLowerCase();
  const weak = checkPasswordStrength(input.password, email);
  if (weak) throw new AppError(ErrorCode.invalidPayload, `Password too weak: ${weak}`);
  const db = getDb();
  if (await db.user.findUnique({ where: { email } })) {
    throw new AppError(ErrorCode.conflict, "An account with this email already exists. Sign in instead.");
  }
  const passwordHash = await hashPassword(input.password);
  try {
    // count and create in one transaction so two simultaneous first sign-ups make one admin
    const user = await db.$transaction(async (tx) => {
      const isAdmin = (await tx.user.count()) === 0;
      return tx.user.create({ data: { email, name: input.name?.trim() || email.split("@")[0] || email, passwordHash, isAdmin } });
    });
    await db.auditLog.create({ data: { actorId: user.id, action: "user.signup", objectType: "user", objectId: user.id } });
    return { id: user.id, email: user.email, isAdmin: user.isAdmin };
  } catch (err) {
    if (typeof err === "object" && err !== null && (err as { code?: string }).code === "P2002") {
      throw new AppError(ErrorCode.conflict, "An account with this email already exists. Sign in instead.");
    }
    throw err;
  }
}
