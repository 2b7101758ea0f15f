import type { Metadata } from "next";
import Link from "next/link";
import { SignUpForm } from "@/components/sign-up-form";
import { safeCallbackPath } from "@/server/shared/callback-url";
import { readSignupPageState } from "@/server/web/accounts";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Sign up" };

export default async function SignUpPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string | string[] }> }) {
  const params = await searchParams;
  const callbackUrl = safeCallbackPath(typeof params.callbackUrl === "string" ? params.callbackUrl : undefined);
  const signInHref = callbackUrl === "/workspaces" ? "/signin" : `/signin?${new URLSearchParams({ callbackUrl }).toString()}`;
  const state = await readSignupPageState();
  if (state.kind === "refused") {
    return (
      <div className="card space-y-4" data-testid="signup-refused">
        <h2 className="text-lg font-medium">Sign-up needs an invitation</h2>
        <p data-testid="signup-policy-message" className="text-sm">
          {state.message}
        </p>
        <p className="text-sm text-zinc-500">An invitation link lets you set your password and join the right workspace.</p>
        <p className="text-center text-sm text-zinc-500">
          Already have an account?{" "}
          <Link href={signInHref} className="text-indigo-600 hover:underline">
            Sign in
          </Link>
        </p>
      </div>
    );
  }
  return <SignUpForm firstAccount={state.kind === "first"} callbackUrl={callbackUrl} signInHref={signInHref} />;
}
