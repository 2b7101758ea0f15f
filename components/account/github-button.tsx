"use client";

import { networkErrorMessage } from "@/components/network-error";
import { signIn } from "next-auth/react";
import { useState } from "react";

/**
 * "Continue with GitHub". `before` runs first (the invitation page stores its token for the
 * callback); its failure message is shown instead of leaving for GitHub.
 */
export function GitHubButton({
  callbackUrl,
  before,
}: {
  callbackUrl: string;
  before?: () => Promise<string | undefined>;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  async function onClick() {
    setBusy(true);
    setError(undefined);
    try {
      const failure = before ? await before() : undefined;
      if (failure) {
        setError(failure);
        setBusy(false);
        return;
      }
      await signIn("github", { callbackUrl });
    } catch {
      setError(networkErrorMessage);
      setBusy(false);
    }
  }

  return (
    <div className="space-y-2">
      <div className="flex items-center gap-2 text-xs text-zinc-500">
        <span className="h-px flex-1 bg-zinc-200 dark:bg-zinc-700" />
        or
        <span className="h-px flex-1 bg-zinc-200 dark:bg-zinc-700" />
      </div>
      <button
        data-testid="signin-github"
        type="button"
        className="btn-quiet w-full border border-zinc-300 dark:border-zinc-700"
        disabled={busy}
        onClick={() => void onClick()}
      >
        {busy ? "Opening GitHub…" : "Continue with GitHub"}
      </button>
      {error && (
        <p role="status" className="text-sm text-red-600 dark:text-red-400">
          {error}
        </p>
      )}
    </div>
  );
}
