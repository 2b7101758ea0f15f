import { SignInForm } from "@/components/sign-in-form";
import { getEnv } from "@/server/env/env";
import { disabledMessage } from "@/server/web/auth";

export const dynamic = "force-dynamic";

/** What an `?error=` code (from next-auth or the GitHub sign-in) tells the person. */
const errorMessages: Record<string, string> = {
  github_no_verified_email: "GitHub reports no verified email for your account. Verify your email on GitHub, then try again.",
  github_disabled: disabledMessage,
  github_signup_refused:
    "No Conduit account uses a verified email of your GitHub account, and new accounts need an invitation. Ask an admin or a workspace owner for an invitation link.",
  AccessDenied: "Sign-in was refused.",
};

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string; error?: string }> }) {
  const { callbackUrl, error } = await searchParams;
  const env = getEnv();
  const message = error ? (errorMessages[error] ?? "Sign-in failed. Try again.") : undefined;
  return <SignInForm callbackUrl={safeCallback(callbackUrl)} initialError={message} github={Boolean(env.GITHUB_ID && env.GITHUB_SECRET)} />;
}

function safeCallback(url: string | undefined): string {
  // only same-site paths: an absolute URL here would be an open redirect
  return url && url.startsWith("/") && !url.startsWith("//") ? url : "/workspaces";
}
