"use client";

import { sendForError } from "@/components/send-json";
import { signIn } from "next-auth/react";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { useHydrated } from "@/components/use-hydrated";
import { renewingOwnSignIn } from "@/components/session/wire-client";

const send = sendForError;

/** Name and password of the signed-in person. */
export function AccountSettings({ email, name, hasPassword }: { email: string; name: string; hasPassword: boolean }) {
  const router = useRouter();
  const [nameState, setNameState] = useState<{ busy: boolean; error?: string; saved?: boolean }>({ busy: false });
  const [pwState, setPwState] = useState<{ busy: boolean; error?: string; saved?: boolean }>({ busy: false });
  const hydrated = useHydrated();

  async function onRename(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setNameState({ busy: true });
    const error = await send("/api/account", "PATCH", { name: String(form.get("name") ?? "") });
    setNameState({ busy: false, error, saved: !error });
    if (!error) router.refresh();
  }

  async function onPassword(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    const newPassword = String(form.get("newPassword") ?? "");
    setPwState({ busy: true });
    // the change voids every cookie of the account, this one too: sign in again with the new
    // password (the page's socket, closed for the old cookie, connects again afterwards)
    const outcome = await renewingOwnSignIn(async () => {
      const error = await send("/api/account/password", "POST", {
        currentPassword: String(form.get("currentPassword") ?? ""),
        newPassword,
      });
      if (error) return { error };
      return { result: await signIn("credentials", { email, password: newPassword, redirect: false }) };
    });
    if ("error" in outcome) return setPwState({ busy: false, error: outcome.error });
    const result = outcome.result;
    if (!result || result.error) {
      window.location.assign("/signin?callbackUrl=%2Faccount");
      return;
    }
    formEl.reset();
    setPwState({ busy: false, saved: true });
    router.refresh();
  }

  return (
    <>
      <form onSubmit={onRename} className="card space-y-3" aria-label="Name">
        <h2 className="text-sm font-medium text-zinc-500">Name</h2>
        <div className="flex flex-wrap items-end gap-3">
          <label className="min-w-48 flex-1 space-y-1 text-sm">
            <span>Shown to other members</span>
            <input
              data-testid="account-name"
              name="name"
              defaultValue={name}
              required
              maxLength={100}
              className="field"
            />
          </label>
          <button data-testid="account-name-save" type="submit" className="btn" disabled={nameState.busy || !hydrated}>
            {nameState.busy ? "Saving…" : "Save name"}
          </button>
        </div>
        {nameState.error && (
          <p role="status" className="text-sm text-red-600 dark:text-red-400">
            {nameState.error}
          </p>
        )}
        {nameState.saved && (
          <p role="status" className="text-sm text-emerald-700 dark:text-emerald-400">
            Name saved.
          </p>
        )}
      </form>
      <form onSubmit={onPassword} className="card space-y-3" aria-label="Password">
        <h2 className="text-sm font-medium text-zinc-500">Password</h2>
        <p className="text-xs text-zinc-500">Changing it signs you out everywhere else (other browsers and devices).</p>
        <label className="block space-y-1 text-sm">
          <span>Current password{hasPassword ? "" : " (none yet: you signed up with GitHub; leave empty)"}</span>
          <input
            data-testid="account-password-current"
            name="currentPassword"
            type="password"
            autoComplete="current-password"
            required={hasPassword}
            className="field"
          />
        </label>
        <label className="block space-y-1 text-sm">
          <span>New password</span>
          <input
            data-testid="account-password-new"
            name="newPassword"
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
        {pwState.error && (
          <p data-testid="account-password-error" role="status" className="text-sm text-red-600 dark:text-red-400">
            {pwState.error}
          </p>
        )}
        {pwState.saved && (
          <p
            data-testid="account-password-saved"
            role="status"
            className="text-sm text-emerald-700 dark:text-emerald-400"
          >
            Password changed. Other sessions were signed out.
          </p>
        )}
        <button data-testid="account-password-save" type="submit" className="btn" disabled={pwState.busy || !hydrated}>
          {pwState.busy ? "Changing…" : "Change password"}
        </button>
      </form>
    </>
  );
}
