"use client";

import Link from "next/link";
import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { GitHubButton } from "@/components/account/github-button";
import { networkErrorMessage } from "@/components/network-error";
import { useHydrated } from "@/components/use-hydrated";

export function SignInForm({
  callbackUrl,
  signUpHref = "/signup",
  initialError,
  github,
}: {
  /** Where to go once signed in: a same-site path the page checked (server/shared/callback-url.ts). */
  callbackUrl: string;
  /** The sign-up page, carrying the same callback. */
  signUpHref?: string;
  initialError?: string;
  github: boolean;
}) {
  const [error, setError] = useState<string | undefined>(initialError);
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    let result: Awaited<ReturnType<typeof signIn>>;
    try {
      result = await signIn("credentials", {
        email: String(form.get("email") ?? ""),
        password: String(form.get("password") ?? ""),
        redirect: false,
      });
    } catch {
      // next-auth's fetch throws when the request never arrives: the button must come back
      setError(networkErrorMessage);
      return;
    } finally {
      setBusy(false);
    }
    if (!result || result.error) {
      setError(result?.error && result.error !== "CredentialsSignin" ? result.error : "Wrong email or password.");
      return;
    }
    window.location.assign(callbackUrl);
  }

  return (
    <form onSubmit={onSubmit} className="card space-y-4" aria-label="Sign in">
      <h2 className="text-lg font-medium">Sign in</h2>
      <label className="block space-y-1 text-sm">
        <span>Email</span>
        <input data-testid="signin-email" name="email" type="email" autoComplete="email" required className="field" />
      </label>
      <label className="block space-y-1 text-sm">
        <span>Password</span>
        <input data-testid="signin-password" name="password" type="password" autoComplete="current-password" required className="field" />
      </label>
      {error && (
        <p data-testid="signin-error" className="text-sm text-red-600 dark:text-red-400">
          {error}
        </p>
      )}
      <button data-testid="signin-submit" type="submit" className="btn w-full" disabled={busy || !hydrated}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
      {github && <GitHubButton callbackUrl={callbackUrl} />}
      <p className="text-center text-sm text-zinc-500">
        No account yet?{" "}
        <Link href={signUpHref} className="text-indigo-600 hover:underline">
          Sign up
        </Link>
      </p>
    </form>
  );
}
