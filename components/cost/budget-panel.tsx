"use client";

import { networkErrorMessage } from "@/components/network-error";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { formatUsd } from "@/components/format/money";

/** The workspace's monthly limit and this month's spend; owners edit the limit (empty = none). */
export function BudgetPanel(props: { slug: string; limitUsd: number | null; spentUsd: number; canEdit: boolean }) {
  const { slug, limitUsd, spentUsd, canEdit } = props;
  const router = useRouter();
  const [value, setValue] = useState(limitUsd === null ? "" : String(limitUsd));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function onSave(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const trimmed = value.trim();
    const parsed = trimmed === "" ? null : Number(trimmed);
    if (parsed !== null && (!Number.isFinite(parsed) || parsed < 0)) {
      setError("Enter an amount in USD (0 or more), or leave it empty for no limit.");
      return;
    }
    setBusy(true);
    setError(undefined);
    let res: Response;
    try {
      res = await fetch(`/api/workspaces/${encodeURIComponent(slug)}/budget`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ monthlyBudgetUsd: parsed }),
      });
    } catch {
      // the request never got an answer (offline, server restarting): the button works again
      setError(networkErrorMessage);
      return;
    } finally {
      setBusy(false);
    }
    if (!res.ok) {
      const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
      setError(body?.error?.message ?? `Saving failed (${res.status}).`);
      return;
    }
    router.refresh();
  }

  const over = limitUsd !== null && spentUsd >= limitUsd;
  return (
    <section className="card space-y-3" aria-label="Budget">
      <h2 className="text-sm font-medium text-zinc-500">Monthly budget (UTC month)</h2>
      <p className="text-sm">
        Spent this month:{" "}
        <span data-testid="spend-total" className="font-mono">
          {formatUsd(spentUsd)}
        </span>
        {" · "}
        limit: <span className="font-mono">{limitUsd === null ? "none" : formatUsd(limitUsd)}</span>
        {over && <span className="ml-2 text-red-600">New turns are refused until the limit is raised.</span>}
      </p>
      {canEdit ? (
        <form onSubmit={onSave} className="flex items-center gap-2 text-sm">
          <label htmlFor="budget-input">Limit in USD</label>
          <input
            id="budget-input"
            data-testid="budget-input"
            inputMode="decimal"
            placeholder="no limit"
            value={value}
            onChange={(e) => setValue(e.target.value)}
            className="field w-32"
          />
          <button type="submit" data-testid="budget-save" disabled={busy} className="btn">
            Save
          </button>
        </form>
      ) : (
        <p className="text-xs text-zinc-500">Only owners change the limit.</p>
      )}
      {error && (
        <p role="alert" className="text-sm text-red-600">
          {error}
        </p>
      )}
    </section>
  );
}
