/**
 * next-auth configuration: email + password (argon2id) and, when configured, GitHub.
 * Sessions are JWTs in an encrypted, signed cookie, which the sidecar verifies with the same
 * secret. The JWT carries the user id (`uid`) and the account's session version (`sv`);
 * everything else is read from the database.
 */
import type { NextAuthOptions, User } from "next-auth";
import { getServerSession } from "next-auth";
import { cookies, headers as requestHeaders } from "next/headers";
import { redirect } from "next/navigation";
import CredentialsProvider from "next-auth/providers/credentials";
import GitHubProvider from "next-auth/providers/github";
import { z } from "zod";
import { getDb } from "@/server/db/client";
import { decideGitHubSignIn, type GitHubEmail } from "@/server/domain/account/github-sign-in";
import { isSessionCurrent, sessionVersionOf } from "@/server/domain/account/session-validity";
import { getEnv } from "@/server/env/env";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { endSessions } from "@/server/web/account";
import { consumeInvitationFor, pendingInvitationEmail } from "@/server/web/invitations";
import { logger } from "@/server/web/logger";
import { checkCredentials } from "@/server/web/credential-check";
import { clientAddressOf, signInThrottle, throttledMessage } from "@/server/web/rate-limit";
import { EDGE_CLIENT_IP_HEADER } from "@/server/shared/edge-vouch";
import { PAGE_PATH_HEADER, signInHref } from "@/server/shared/callback-url";

/** The web process's throttle (the edge adds its own per-address limit in front). */
const throttle = signInThrottle;

/** The cookie that carries an invitation token through a GitHub sign-in. */
export const invitationCookie = "conduit-invitation";

export const disabledMessage = "This account is disabled. Ask an admin.";

const ZCredentials = z.object({ email: z.string().trim().toLowerCase().pipe(z.email()), password: z.string().min(1) });

function headerValue(headers: Record<string, string | string[] | undefined> | undefined, name: string): string | undefined {
  const value = headers?.[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/** GitHub's `/user/emails`, with the access token the sign-in just obtained. */
async function fetchGitHubEmails(accessToken: string): Promise<GitHubEmail[]> {
  const res = await fetch("https://api.github.com/user/emails", {
    headers: { Authorization: `Bearer ${accessToken}`, Accept: "application/vnd.github+json", "User-Agent": "Conduit" },
  });
  if (!res.ok) return [];
  const parsed = z.array(z.object({ email: z.string(), verified: z.boolean(), primary: z.boolean() })).safeParse(await res.json());
  return parsed.success ? parsed.data : [];
}

/**
 * A GitHub sign-in: link through a verified email, or create an account when the first-account
 * rule, the policy or an invitation (carried in {@link invitationCookie}) allows. Returns true, or
 * the sign-in page with the reason.
 */
async function signInWithGitHub(user: User, accessToken: string | undefined): Promise<true | string> {
  // codes, not text: the sign-in page maps them to messages (no text injected through the URL)
  const refuse = (code: string) => `/signin?error=${code}`;
  if (!accessToken) return refuse("OAuthCallback");
  const emails = await fetchGitHubEmails(accessToken);
  const db = getDb();
  const jar = await cookies();
  const token = jar.get(invitationCookie)?.value;
  const invitedEmail = token ? await pendingInvitationEmail(token) : undefined;
  const candidates = emails.map((e) => e.email.trim().toLowerCase());
  const accounts = await db.user.findMany({ where: { email: { in: candidates } }, select: { email: true, disabledAt: true } });
  const decision = decideGitHubSignIn({
    emails,
    accounts: accounts.map((a) => ({ email: a.email, disabled: a.disabledAt !== null })),
    invitedEmail,
    userCount: await db.user.count(),
    policy: getEnv().CONDUIT_SIGNUP,
  });
  if (decision.kind === "refuse") return refuse(`github_${decision.reason}`);
  let account = await db.user.findUnique({ where: { email: decision.email } });
  const created = !account;
  if (!account) {
    account = await db.user.create({ data: { email: decision.email, name: user.name ?? decision.email, isAdmin: decision.kind === "create" && decision.isAdmin } });
  }
  if (token && invitedEmail === decision.email) {
    const used = await consumeInvitationFor(account.id, token);
    jar.delete(invitationCookie);
    if (!used && created && decision.kind === "create" && decision.invited) {
      // the invitation was used or revoked meanwhile: the account it allowed must not stay
      await db.user.delete({ where: { id: account.id } });
      return refuse("github_signup_refused");
    }
  }
  if (created) {
    await db.auditLog.create({ data: { actorId: account.id, action: "user.signup", objectType: "user", objectId: account.id, details: JSON.stringify({ via: "github", admin: account.isAdmin }) } });
  }
  await db.user.update({ where: { id: account.id }, data: { lastSignInAt: new Date() } });
  // the jwt callback reads the account by this email
  user.email = account.email;
  return true;
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
        const address = clientAddressOf(headerValue(req?.headers, EDGE_CLIENT_IP_HEADER));
        // a throttled attempt is answered without checking the password
        const verdict = throttle.check(email, address);
        if (!verdict.ok) throw new Error(throttledMessage(verdict.retryAfterMs));
        const db = getDb();
        // one argon2 verification whether the email has an account or not (credential-check.ts)
        const checked = await checkCredentials(db, email, password);
        if (!checked.ok && checked.reason === "wrong") {
          throttle.recordFailure(email, address);
          throw new Error("Wrong email or password.");
        }
        throttle.recordSuccess(email, address);
        // only someone who knows the password learns that the account is disabled
        if (!checked.ok) throw new Error(disabledMessage);
        const { user } = checked;
        await db.user.update({ where: { id: user.id }, data: { lastSignInAt: new Date() } });
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
    pages: { signIn: "/signin", error: "/signin" },
    providers,
    callbacks: {
      async signIn({ user, account }) {
        if (account?.provider === "credentials") return true;
        if (account?.provider === "github") return signInWithGitHub(user, account.access_token);
        return false;
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
    events: {
      async signOut({ token }) {
        // a copied cookie must stop working too: sign-out voids the account's current version
        if (token && typeof token.uid === "string") {
          await endSessions(token.uid, sessionVersionOf(token as { sv?: unknown })).catch((err: unknown) => logger.error({ err }, "sign-out could not end sessions"));
        }
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
  return (await readStanding()).user;
}

/** The signed-in user, or why there is none: `disabled` when the cookie is of an account since disabled. */
async function readStanding(): Promise<{ user?: CurrentUser; disabled?: boolean }> {
  const session = await getServerSession(authOptions());
  const claims = session?.user as { id?: string; sv?: number } | undefined;
  if (!claims?.id) return {};
  const user = await getDb().user.findUnique({ where: { id: claims.id } });
  if (!user) return {};
  // the cookie once spoke for this account: its holder may learn that it was disabled
  if (user.disabledAt !== null) return { disabled: true };
  if (!isSessionCurrent(user, sessionVersionOf(claims))) return {};
  return { user: { id: user.id, email: user.email, name: user.name, isAdmin: user.isAdmin } };
}

/** The signed-in user; an `unauthorized` error otherwise. */
export async function requireCurrentUser(): Promise<CurrentUser> {
  const user = await findCurrentUser();
  if (!user) throw new AppError(ErrorCode.unauthorized, "Sign in first.");
  return user;
}

/**
 * For pages: the signed-in user, or a redirect to the sign-in page that comes back to this page
 * afterwards (its path from proxy.ts) and says why when the account was disabled.
 */
export async function requirePageUser(): Promise<CurrentUser> {
  const { user, disabled } = await readStanding();
  if (user) return user;
  const path = (await requestHeaders()).get(PAGE_PATH_HEADER);
  redirect(signInHref(path, disabled ? { error: "disabled" } : {}));
}
