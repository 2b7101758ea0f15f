"use client";

import { networkErrorMessage } from "@/components/network-error";
import { useRouter } from "next/navigation";
import { useId, useState, type FormEvent } from "react";
import {
  deadlineChoices,
  deadlineValue,
  formatDeadline,
  parseDeadlineValue,
} from "@/components/approval/approval-settings-format";
import { formatRelative } from "@/components/session/format";
import type { PermissionRuleView } from "@/server/shared/wire/approval";

async function failureOf(res: Response): Promise<string | undefined> {
  if (res.ok) return undefined;
  const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
  return body?.error?.message ?? `Request failed (${res.status}).`;
}

/**
 * The workspace's approval deadline and its remembered rules. Everyone in the workspace sees
 * them; owners change the deadline and revoke rules. The sidecar reads both for every question,
 * so a change applies to the next approval (one already waiting keeps its deadline).
 */
export function ApprovalSettingsPanel(props: {
  slug: string;
  deadlineSec: number | null;
  rules: PermissionRuleView[];
  canEdit: boolean;
}) {
  const { slug, deadlineSec, rules, canEdit } = props;
  const router = useRouter();
  const selectId = useId();
  const [selected, setSelected] = useState(deadlineValue(deadlineSec));
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState<string>();
  const base = `/api/workspaces/${encodeURIComponent(slug)}/approval-settings`;

  // A deadline set outside the choices (through the API) stays selectable as it is.
  const choices = deadlineChoices.some((c) => c === deadlineSec) ? deadlineChoices : [deadlineSec, ...deadlineChoices];

  async function run(what: string, request: () => Promise<Response>): Promise<boolean> {
    setBusy(what);
    setError(undefined);
    setSaved(false);
    let failure: string | undefined;
    try {
      failure = await failureOf(await request());
    } catch {
      failure = networkErrorMessage;
    }
    setBusy(undefined);
    if (failure) {
      setError(failure);
      return false;
    }
    router.refresh();
    return true;
  }

  async function onSave(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const approvalDeadlineSec = parseDeadlineValue(selected);
    if (approvalDeadlineSec === undefined) {
      setError("Pick a deadline from the list.");
      return;
    }
    const ok = await run("deadline", () =>
      fetch(base, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ approvalDeadlineSec }),
      }),
    );
    setSaved(ok);
  }

  async function onRevoke(rule: PermissionRuleView) {
    const label = rule.label;
    if (!window.confirm(`Revoke ${label}? Sessions in this workspace will ask a member again for it.`)) return;
    await run(rule.id, () => fetch(`${base}/rules/${encodeURIComponent(rule.id)}`, { method: "DELETE" }));
  }

  return (
    <section className="card space-y-4" aria-label="Approvals" data-testid="approval-settings">
      <h2 className="text-sm font-medium text-zinc-500">Approvals</h2>
      <div className="space-y-2">
        <p className="text-sm">
          Deadline:{" "}
          <span data-testid="approval-deadline" className="font-medium">
            {formatDeadline(deadlineSec)}
          </span>
          <span className="text-zinc-500">
            {deadlineSec === null
              ? " · a question waits until a member answers it."
              : " · a question nobody answers by then is denied."}
          </span>
        </p>
        {canEdit ? (
          <form onSubmit={onSave} className="flex flex-wrap items-center gap-2 text-sm">
            <label htmlFor={selectId}>Deny unanswered approvals after</label>
            <select
              id={selectId}
              data-testid="approval-deadline-select"
              value={selected}
              onChange={(e) => {
                setSelected(e.target.value);
                setSaved(false);
              }}
              className="field w-auto py-1"
            >
              {choices.map((c) => (
                <option key={deadlineValue(c)} value={deadlineValue(c)}>
                  {formatDeadline(c)}
                </option>
              ))}
            </select>
            <button
              type="submit"
              data-testid="approval-deadline-save"
              disabled={busy !== undefined || selected === deadlineValue(deadlineSec)}
              className="btn py-1"
            >
              {busy === "deadline" ? "Saving…" : "Save"}
            </button>
            {saved && (
              <span role="status" className="text-xs text-zinc-500">
                Saved. Applies to the next approval.
              </span>
            )}
          </form>
        ) : (
          <p className="text-xs text-zinc-500">Only owners change the deadline or revoke rules.</p>
        )}
      </div>
      <div className="space-y-2">
        <h3 className="text-sm font-medium">Remembered rules</h3>
        {rules.length === 0 ? (
          <p data-testid="permission-rules-empty" className="text-sm text-zinc-500">
            No remembered rules: every tool call that needs permission asks a member. Choosing &ldquo;Allow and
            remember&rdquo; for this workspace on an approval adds one.
          </p>
        ) : (
          <ul className="divide-y divide-zinc-200 text-sm dark:divide-zinc-800">
            {rules.map((rule) => {
              const label = rule.label;
              return (
                <li
                  key={rule.id}
                  data-testid="permission-rule"
                  data-rule={label}
                  className="flex flex-wrap items-center justify-between gap-2 py-2"
                >
                  <div className="min-w-0 space-y-0.5">
                    <div className="flex items-center gap-2">
                      <code className="break-all rounded bg-zinc-100 px-1.5 py-0.5 font-mono text-xs dark:bg-zinc-800">
                        {label}
                      </code>
                      {rule.behavior !== "allow" && (
                        <span className="text-xs text-amber-700 dark:text-amber-400">{rule.behavior}</span>
                      )}
                    </div>
                    <p className="text-xs text-zinc-500">
                      remembered by{" "}
                      {rule.createdBy ? (
                        <span title={rule.createdBy.email}>
                          {rule.createdBy.name} ({rule.createdBy.email})
                        </span>
                      ) : (
                        "a former account"
                      )}
                      {" · "}
                      <time dateTime={rule.createdAt} title={rule.createdAt} suppressHydrationWarning>
                        {formatRelative(rule.createdAt)}
                      </time>
                    </p>
                  </div>
                  {canEdit && (
                    <button
                      type="button"
                      data-testid="revoke-rule-button"
                      aria-label={`Revoke ${label}`}
                      className="btn-quiet py-1"
                      disabled={busy !== undefined}
                      onClick={() => void onRevoke(rule)}
                    >
                      {busy === rule.id ? "Revoking…" : "Revoke"}
                    </button>
                  )}
                </li>
              );
            })}
          </ul>
        )}
      </div>
      {error && (
        <p data-testid="approval-settings-error" role="alert" className="text-sm text-red-600 dark:text-red-400">
          {error}
        </p>
      )}
    </section>
  );
}
