/**
 * Sign-up. The first account of an instance becomes its admin; after that the sign-up policy
 * (`CONDUIT_SIGNUP`) decides who may create an account without an invitation. There is no
 * default password.
 */
import { getDb } from "@/server/db/client";
import { decideSignup, signupPageState, type SignupPolicy } from "@/server/domain/account/signup-policy";
import { getEnv } from "@/server/env/env";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { checkPasswordStrength, hashPassword } from "@/server/web/passwords";

export interface NewAccount {
  email: string;
  name?: string;
  password: string;
}

/** Thrown inside the transaction when the policy refuses; carries the message for people. */
class SignupRefused extends Error {}

/**
 * Creates an account by self sign-up; a refused policy, a taken email or a weak password is a
 * clear error. The policy is decided inside the insert's transaction, so of two first sign-ups
 * only one becomes admin (and, under `invite`, the other is refused).
 */
export async function createAccount(
  input: NewAccount,
  policy: SignupPolicy = getEnv().CONDUIT_SIGNUP,
): Promise<{ id: string; email: string; isAdmin: boolean }> {
  const email = input.email.trim().toLowerCase();
  const db = getDb();
  // cheap refusal first: no hashing for a sign-up the policy refuses anyway
  const early = decideSignup({ policy, userCount: await db.user.count(), invited: false });
  if (!early.allowed) throw new AppError(ErrorCode.forbidden, early.message);
  const weak = checkPasswordStrength(input.password, email);
  if (weak) throw new AppError(ErrorCode.invalidPayload, `Password too weak: ${weak}`);
  if (await db.user.findUnique({ where: { email } })) {
    throw new AppError(ErrorCode.conflict, "An account with this email already exists. Sign in instead.");
  }
  const passwordHash = await hashPassword(input.password);
  try {
    const insert = () =>
      db.$transaction(
        async (tx) => {
          const decision = decideSignup({ policy, userCount: await tx.user.count(), invited: false });
          if (!decision.allowed) throw new SignupRefused(decision.message);
          return tx.user.create({
            data: { email, name: input.name?.trim() || email.split("@")[0] || email, passwordHash, isAdmin: decision.isAdmin },
          });
        },
        // PostgreSQL's default (read committed) would let two first sign-ups both count 0
        { isolationLevel: "Serializable" },
      );
    // a serialization failure means another sign-up won the race: decide again against it
    const user = await insert().catch((err: unknown) => (isSerializationFailure(err) ? insert() : Promise.reject(err)));
    await db.auditLog.create({ data: { actorId: user.id, action: "user.signup", objectType: "user", objectId: user.id, details: JSON.stringify({ admin: user.isAdmin }) } });
    return { id: user.id, email: user.email, isAdmin: user.isAdmin };
  } catch (err) {
    if (err instanceof SignupRefused) throw new AppError(ErrorCode.forbidden, err.message);
    if (typeof err === "object" && err !== null && (err as { code?: string }).code === "P2002") {
      throw new AppError(ErrorCode.conflict, "An account with this email already exists. Sign in instead.");
    }
    throw err;
  }
}

/** What the sign-up page shows on this instance now. */
export async function readSignupPageState(policy: SignupPolicy = getEnv().CONDUIT_SIGNUP): Promise<ReturnType<typeof signupPageState>> {
  return signupPageState(policy, await getDb().user.count());
}

function isSerializationFailure(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: string }).code === "P2034";
}
