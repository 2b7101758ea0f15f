import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { SignInForm } from "@/components/sign-in-form";
import { getDb } from "@/server/db/client";
import { getEnv } from "@/server/env/env";
import { safeCallbackPath } from "@/server/shared/callback-url";
import { disabledMessage, findCurrentUser } from "@/server/web/auth";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Sign in" };

/** What an `?error=` code (from next-auth, the GitHub sign-in or a page's redirect) tells the person. */
const errorMessages: Record<string, string> = {
  github_no_verified_email: "GitHub reports no verified email for your account. Verify your email on GitHub, then try again.",
  github_disabled: disabledMessage,
  github_signup_refused:
    "No Conduit account uses a verified email of your GitHub account, and new accounts need an invitation. Ask an admin or a workspace owner for an invitation link.",
  disabled: disabledMessage,
  AccessDenied: "Sign-in was refused.",
};

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string | string[]; error?: string | string[] }> }) {
  const params = await searchParams;
  const callbackUrl = safeCallbackPath(typeof params.callbackUrl === "string" ? params.callbackUrl : undefined);
  const error = typeof params.error === "string" ? params.error : undefined;
  // already signed in: straight to the page asked for
  if (!error && (await findCurrentUser())) redirect(callbackUrl);
  // a new Conduit has no account to sign in to: its first person creates the admin
  if ((await getDb().user.count()) === 0) redirect(signUpHref(callbackUrl));
  const env = getEnv();
  const message = error ? (errorMessages[error] ?? "Sign-in failed. Try again.") : undefined;
  return <SignInForm callbackUrl={callbackUrl} signUpHref={signUpHref(callbackUrl)} initialError={message} github={Boolean(env.GITHUB_ID && env.GITHUB_SECRET)} />;
}

function signUpHref(callbackUrl: string): string {
  return callbackUrl === "/workspaces" ? "/signup" : `/signup?${new URLSearchParams({ callbackUrl }).toString()}`;
}
