/**
 * next-auth configuration: email + password (argon2id) and, when configured, GitHub.
 * Sessions are JWTs in an encrypted, signed cookie, which the sidecar verifies with the same
 * secret. The JWT carries only the user id (`uid`); everything else is read from the database.
 */
import type { NextAuthOptions } from "next-auth";
import { getServerSession } from "next-auth";
import { redirect } from "next/navigation";
import CredentialsProvider from "next-auth/providers/credentials";
import GitHubProvider from "next-auth/providers/github";
import { z } from "zod";
import { getDb } from "@/server/db/client";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { verifyPassword } from "@/server/web/passwords";
import { FailureLimiter } from "@/server/web/rate-limit";
import { getEnv } from "@/server/env/env";
import { isSessionCurrent, sessionVersionOf } from "@/server/domain/account/session-validity";

const perEmail = new FailureLimiter(5, 15 * 60_000);
const perAddress = new FailureLimiter(20, 15 * 60_000);

const ZCredentials = z.object({ email: z.string().trim().toLowerCase().pipe(z.email()), password: z.string().min(1) });

function clientAddress(headers: Record<string, string | string[] | undefined> | undefined): string {
  const forwarded = headers?.["x-forwarded-for"];
  const value = Array.isArray(forwarded) ? forwarded[0] : forwarded;
  return value?.split(",")[0]?.trim() || "local";
}

function lockedMessage(ms: number): string {
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  return `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}

/** The options shared by the route handler and `getServerSession`. */
export function authOptions(): NextAuthOptions {
  const env = getEnv();
  const providers: NextAuthOptions["providers"] = [
    CredentialsProvider({
      name: "Email and password",
      credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
      async authorize(credentials, req) {
        const parsed = ZCredentials.safeParse(credentials);
        if (!parsed.success) throw new Error("Enter your email address and password.");
        const { email, password } = parsed.data;
        const address = clientAddress(req?.headers);
        const wait = Math.max(perEmail.retryAfterMs(email), perAddress.retryAfterMs(address));
        if (wait > 0) throw new Error(lockedMessage(wait));
        const user = await getDb().user.findUnique({ where: { email } });
        const ok = user?.passwordHash ? await verifyPassword(user.passwordHash, password) : false;
        if (!user || !ok) {
          perEmail.recordFailure(email);
          perAddress.recordFailure(address);
          throw new Error("Wrong email or password.");
        }
        perEmail.reset(email);
        return { id: user.id, email: user.email, name: user.name };
      },
    }),
  ];
  if (env.GITHUB_ID && env.GITHUB_SECRET) {
    providers.push(GitHubProvider({ clientId: env.GITHUB_ID, clientSecret: env.GITHUB_SECRET }));
  }
  return {
    secret: env.NEXTAUTH_SECRET,
    session: { strategy: "jwt", maxAge: 7 * 24 * 3600 },
    pages: { signIn: "/signin" },
    providers,
    callbacks: {
      async signIn({ user, account }) {
        if (account?.provider === "credentials") return true;
        // OAuth: link by verified email; the first account of the instance becomes admin.
        const email = user.email?.toLowerCase();
        if (!email) return false;
        const db = getDb();
        const existing = await db.user.findUnique({ where: { email } });
        if (!existing) {
          const isAdmin = (await db.user.count()) === 0;
          await db.user.create({ data: { email, name: user.name ?? email, isAdmin } });
        }
        return true;
      },
      async jwt({ token, user }) {
        // Only at sign-in (user present): the cookie keeps the user id and the account's
        // session version, so a later sign-out, password change or disable voids it.
        if (!user) return token;
        const db = getDb();
        const found = user.email
          ? await db.user.findUnique({ where: { email: user.email.toLowerCase() } })
          : await db.user.findUnique({ where: { id: user.id } });
        if (found) {
          token.uid = found.id;
          token.sv = found.sessionVersion;
        }
        return token;
      },
      async session({ session, token }) {
        if (session.user && typeof token.uid === "string") {
          const claims = session.user as { id?: string; sv?: number };
          claims.id = token.uid;
          claims.sv = sessionVersionOf(token as { sv?: unknown });
        }
        return session;
      },
    },
  };
}

export interface CurrentUser {
  id: string;
  email: string;
  name: string;
  isAdmin: boolean;
}

/**
 * The signed-in user, or undefined. Reads the database so a deleted or disabled user, or a
 * cookie from before a sign-out or password change (an older session version), is signed out.
 */
export async function findCurrentUser(): Promise<CurrentUser | undefined> {
  const session = await getServerSession(authOptions());
  const claims = session?.user as { id?: string; sv?: number } | undefined;
  if (!claims?.id) return undefined;
  const user = await getDb().user.findUnique({ where: { id: claims.id } });
  if (!user || !isSessionCurrent(user, sessionVersionOf(claims))) return undefined;
  return { id: user.id, email: user.email, name: user.name, isAdmin: user.isAdmin };
}

/** The signed-in user; an `unauthorized` error otherwise. */
export async function requireCurrentUser(): Promise<CurrentUser> {
  const user = await findCurrentUser();
  if (!user) throw new AppError(ErrorCode.unauthorized, "Sign in first.");
  return user;
}

/** For pages: the signed-in user, or a redirect to the sign-in page. */
export async function requirePageUser(): Promise<CurrentUser> {
  const user = await findCurrentUser();
  if (!user) redirect("/signin");
  return user;
}
