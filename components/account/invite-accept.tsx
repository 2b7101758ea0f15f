"use client";

import { networkErrorMessage } from "@/components/network-error";
import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { GitHubButton } from "@/components/account/github-button";
import { useHydrated } from "@/components/use-hydrated";

async function post(url: string, body: unknown): Promise<{ ok: true; data: unknown } | { ok: false; message: string }> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const parsed = (await res.json().catch(() => null)) as { data?: unknown; error?: { message?: string } } | null;
    if (res.ok) return { ok: true, data: parsed?.data };
    return { ok: false, message: parsed?.error?.message ?? `Request failed (${res.status}).` };
  } catch {
    return { ok: false, message: networkErrorMessage };
  }
}

/**
 * Accepting an invitation: a new person sets a name and password (or continues with GitHub);
 * a signed-in person with the invited email only confirms.
 */
export function InviteAccept(props: {
  token: string;
  email: string;
  target: string;
  expiresAt: string;
  signedIn: boolean;
  github: boolean;
  landing: string;
}) {
  const { token, email, target, signedIn, github, landing } = props;
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      if (signedIn) {
        const joined = await post("/api/invitations/accept", { token });
        if (!joined.ok) return setError(joined.message);
        window.location.assign(landing);
        return;
      }
      const password = String(form.get("password") ?? "");
      const created = await post("/api/invitations/accept", {
        token,
        password,
        name: String(form.get("name") ?? "") || undefined,
      });
      if (!created.ok) return setError(created.message);
      const result = await signIn("credentials", { email, password, redirect: false });
      if (!result || result.error) {
        setError("Your account was created, but signing in failed. Sign in with your new password.");
        return;
      }
      window.location.assign(landing);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={onSubmit} className="card space-y-4" aria-label="Accept invitation" data-testid="invite-accept">
      <h2 className="text-lg font-medium">You are invited</h2>
      <p className="text-sm">
        Join {target}. This link works once and expires on {new Date(props.expiresAt).toLocaleDateString()}.
      </p>
      <label className="block space-y-1 text-sm">
        <span>Email</span>
        <input
          data-testid="invite-accept-email"
          value={email}
          readOnly
          className="field bg-zinc-100 dark:bg-zinc-800"
        />
      </label>
      {!signedIn && (
        <>
          <label className="block space-y-1 text-sm">
            <span>Name</span>
            <input data-testid="invite-accept-name" name="name" autoComplete="name" className="field" />
          </label>
          <label className="block space-y-1 text-sm">
            <span>Password</span>
            <input
              data-testid="invite-accept-password"
              name="password"
              type="password"
              autoComplete="new-password"
              required
              minLength={10}
              className="field"
            />
            <span className="block text-xs text-zinc-500">
              At least 10 characters, mixing letters with digits or symbols.
            </span>
          </label>
        </>
      )}
      {error && (
        <p data-testid="invite-accept-error" role="status" className="text-sm text-red-600 dark:text-red-400">
          {error}
        </p>
      )}
      <button data-testid="invite-accept-submit" type="submit" className="btn w-full" disabled={busy || !hydrated}>
        {busy ? "Joining…" : signedIn ? "Accept invitation" : "Create account and join"}
      </button>
      {github && !signedIn && (
        <GitHubButton
          callbackUrl={landing}
          before={async () => {
            const kept = await post("/api/invitations/github", { token });
            return kept.ok ? undefined : kept.message;
          }}
        />
      )}
    </form>
  );
}
