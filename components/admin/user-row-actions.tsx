"use client";

import { sendForError } from "@/components/send-json";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";

const send = sendForError;

/**
 * The buttons of one row of the admin's user list: make or unmake admin, disable (after a
 * confirmation) or enable, and the monthly budget. Refusals (the last admin, yourself) are
 * shown under the row.
 */
export function UserRowActions(props: {
  userId: string;
  email: string;
  isAdmin: boolean;
  disabled: boolean;
  isSelf: boolean;
  monthlyBudgetUsd: number | null;
}) {
  const { userId, email, isAdmin, disabled, isSelf } = props;
  const router = useRouter();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const base = `/api/admin/users/${encodeURIComponent(userId)}`;

  async function run(request: () => Promise<string | undefined>): Promise<boolean> {
    setBusy(true);
    setError(undefined);
    setSaved(false);
    const failure = await request();
    setBusy(false);
    if (failure) {
      setError(failure);
      return false;
    }
    router.refresh();
    return true;
  }

  async function onBudget(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const raw = String(new FormData(event.currentTarget).get("budget") ?? "").trim();
    const value = raw === "" ? null : Number(raw);
    if (value !== null && (!Number.isFinite(value) || value < 0)) {
      setError("Enter an amount in USD (0 or more), or leave it empty for no limit.");
      return;
    }
    if (await run(() => send(`${base}/budget`, "PUT", { monthlyBudgetUsd: value }))) setSaved(true);
  }

  return (
    <div className="space-y-1">
      <div className="flex flex-wrap items-center justify-end gap-2">
        <form onSubmit={onBudget} className="flex items-center gap-1" aria-label={`Monthly budget of ${email}`}>
          <label className="sr-only" htmlFor={`budget-${userId}`}>
            Monthly budget (USD) of {email}
          </label>
          <input
            id={`budget-${userId}`}
            data-testid="admin-user-budget"
            name="budget"
            type="number"
            min="0"
            step="0.01"
            inputMode="decimal"
            placeholder="no limit"
            defaultValue={props.monthlyBudgetUsd ?? ""}
            // .field is full width; a budget needs a few digits
            style={{ width: "6.5rem" }}
            className="field py-1"
          />
          <button type="submit" data-testid="admin-user-budget-save" className="btn-quiet py-1" disabled={busy}>
            Save
          </button>
        </form>
        <button
          type="button"
          data-testid="admin-user-admin-toggle"
          className="btn-quiet py-1"
          disabled={busy}
          onClick={() => void run(() => send(base, "PATCH", { isAdmin: !isAdmin }))}
        >
          {isAdmin ? "Unmake admin" : "Make admin"}
        </button>
        {disabled ? (
          <button
            type="button"
            data-testid="admin-user-disable"
            className="btn-quiet py-1"
            disabled={busy}
            onClick={() => void run(() => send(base, "PATCH", { disabled: false }))}
          >
            Enable
          </button>
        ) : confirming ? (
          <span className="flex items-center gap-1" role="group" aria-label={`Confirm disabling ${email}`}>
            <span className="text-xs">Sign {isSelf ? "yourself" : email} out everywhere and disable?</span>
            <button
              type="button"
              data-testid="admin-user-disable-confirm"
              className="btn py-1"
              disabled={busy}
              autoFocus
              onClick={() => void run(() => send(base, "PATCH", { disabled: true })).then(() => setConfirming(false))}
            >
              Disable
            </button>
            <button type="button" className="btn-quiet py-1" disabled={busy} onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </span>
        ) : (
          <button
            type="button"
            data-testid="admin-user-disable"
            className="btn-quiet py-1"
            disabled={busy}
            onClick={() => {
              setError(undefined);
              setConfirming(true);
            }}
          >
            Disable
          </button>
        )}
      </div>
      {error && (
        <p data-testid="admin-user-error" role="alert" className="text-right text-xs text-red-600 dark:text-red-400">
          {error}
        </p>
      )}
      {saved && (
        <p
          data-testid="admin-user-saved"
          role="status"
          className="text-right text-xs text-emerald-700 dark:text-emerald-400"
        >
          Budget saved.
        </p>
      )}
    </div>
  );
}
