"use client";

import Link from "next/link";
import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { useHydrated } from "@/components/use-hydrated";

export function SignUpForm({
  firstAccount,
  callbackUrl = "/workspaces",
  signInHref = "/signin",
}: {
  firstAccount: boolean;
  /** Where to go once the account exists and is signed in (a same-site path). */
  callbackUrl?: string;
  signInHref?: string;
}) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const email = String(form.get("email") ?? "");
    const password = String(form.get("password") ?? "");
    setBusy(true);
    setError(undefined);
    try {
      const res = await fetch("/api/signup", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password, name: String(form.get("name") ?? "") || undefined }),
      });
      if (!res.ok) {
        const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
        setError(body?.error?.message ?? `Sign-up failed (${res.status}).`);
        return;
      }
      const result = await signIn("credentials", { email, password, redirect: false });
      if (!result || result.error) {
        setError("Your account was created, but signing in failed. Try signing in.");
        return;
      }
      window.location.assign(callbackUrl);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={onSubmit} className="card space-y-4" aria-label="Sign up">
      <h2 className="text-lg font-medium">Create your account</h2>
      {firstAccount && (
        <p data-testid="signup-first-admin" className="rounded bg-indigo-50 p-2 text-sm text-indigo-900 dark:bg-indigo-950 dark:text-indigo-100">
          This is a new Conduit: this account will administer Conduit. It can invite people and manage the instance.
        </p>
      )}
      <label className="block space-y-1 text-sm">
        <span>Name</span>
        <input data-testid="signup-name" name="name" autoComplete="name" className="field" />
      </label>
      <label className="block space-y-1 text-sm">
        <span>Email</span>
        <input data-testid="signup-email" name="email" type="email" autoComplete="email" required className="field" />
      </label>
      <label className="block space-y-1 text-sm">
        <span>Password</span>
        <input data-testid="signup-password" name="password" type="password" autoComplete="new-password" required minLength={10} className="field" />
        <span className="block text-xs text-zinc-500">At least 10 characters, mixing letters with digits or symbols.</span>
      </label>
      {error && (
        <p data-testid="signup-error" className="text-sm text-red-600 dark:text-red-400">
          {error}
        </p>
      )}
      <button data-testid="signup-submit" type="submit" className="btn w-full" disabled={busy || !hydrated}>
        {busy ? "Creating…" : "Sign up"}
      </button>
      <p className="text-center text-sm text-zinc-500">
        Already have an account?{" "}
        <Link href={signInHref} className="text-indigo-600 hover:underline">
          Sign in
        </Link>
      </p>
    </form>
  );
}
