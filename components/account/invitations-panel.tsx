"use client";

import { sendJson } from "@/components/send-json";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";

/** One invitation as `GET /api/invitations` lists it. */
export interface InvitationRow {
  id: string;
  email: string;
  workspace: { name: string; slug: string } | null;
  role: "owner" | "editor" | "viewer" | null;
  status: "pending" | "used" | "expired" | "revoked";
  createdBy: string;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
  usedBy: string | null;
  revokedAt: string | null;
}

const roles = ["owner", "editor", "viewer"] as const;
const instanceOnly = "none";
const lifetimes = [1, 3, 7, 14, 30] as const;

const send = sendJson;

/** "in 3 days" / "2 hours ago", coarse on purpose. */
function relative(iso: string, now: number): string {
  const ms = new Date(iso).getTime() - now;
  const abs = Math.abs(ms);
  const [n, unit] =
    abs >= 86_400_000
      ? [Math.round(abs / 86_400_000), "day"]
      : abs >= 3_600_000
        ? [Math.round(abs / 3_600_000), "hour"]
        : [Math.max(1, Math.round(abs / 60_000)), "minute"];
  const text = `${n} ${unit}${n === 1 ? "" : "s"}`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

const statusStyle: Record<InvitationRow["status"], string> = {
  pending: "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
  used: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100",
  expired: "bg-zinc-200 text-zinc-700 dark:bg-zinc-700 dark:text-zinc-200",
  revoked: "bg-zinc-200 text-zinc-700 dark:bg-zinc-700 dark:text-zinc-200",
};

/**
 * Create, list and revoke invitations. With `workspaceSlug` (a workspace's owners) invitations
 * are for that workspace; with `workspaces` (the admin page) the creator picks a workspace or
 * none (an account only). A new link is shown once, to copy.
 */
export function InvitationsPanel(props: {
  invitations: InvitationRow[];
  workspaceSlug?: string;
  workspaces?: { slug: string; name: string }[];
  /** the server's clock at render (ISO), so the server's and the browser's text agree */
  renderedAt: string;
}) {
  const { invitations, workspaceSlug, workspaces } = props;
  const admin = workspaces !== undefined;
  const router = useRouter();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<{ email: string; link: string }>();
  const [copied, setCopied] = useState(false);
  const [role, setRole] = useState<string>(admin && (workspaces?.length ?? 0) === 0 ? instanceOnly : "editor");
  const now = new Date(props.renderedAt).getTime();

  async function onCreate(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    const email = String(form.get("email") ?? "");
    const chosenRole = String(form.get("role") ?? "editor");
    const slug = admin
      ? chosenRole === instanceOnly
        ? null
        : String(form.get("workspace") ?? "") || null
      : (workspaceSlug ?? null);
    setBusy(true);
    setError(undefined);
    setCreated(undefined);
    setCopied(false);
    const result = await send("/api/invitations", "POST", {
      email,
      workspaceSlug: slug,
      role: chosenRole === instanceOnly ? undefined : chosenRole,
      expiresInDays: Number(form.get("days") ?? 7),
    });
    setBusy(false);
    if (!result.ok) return setError(result.message);
    const { link } = result.data as { link: string };
    setCreated({ email, link });
    formEl.reset();
    setRole(admin && (workspaces?.length ?? 0) === 0 ? instanceOnly : "editor");
    router.refresh();
  }

  async function onRevoke(id: string) {
    setBusy(true);
    setError(undefined);
    const result = await send(`/api/invitations/${encodeURIComponent(id)}`, "DELETE");
    setBusy(false);
    if (!result.ok) return setError(result.message);
    router.refresh();
  }

  async function onCopy(link: string) {
    try {
      await navigator.clipboard.writeText(link);
      setCopied(true);
    } catch {
      setError("Copying failed: select the link and copy it by hand.");
    }
  }

  return (
    <section className="card space-y-4" aria-label="Invitations" data-testid="invitations-panel">
      <h2 className="text-sm font-medium text-zinc-500">Invitations</h2>
      <form onSubmit={onCreate} className="flex flex-wrap items-end gap-3" aria-label="Invite someone">
        <label className="min-w-48 flex-1 space-y-1 text-sm">
          <span>Email</span>
          <input data-testid="invite-email" name="email" type="email" required className="field" />
        </label>
        <label className="space-y-1 text-sm">
          <span>Role</span>
          <select
            data-testid="invite-role"
            name="role"
            value={role}
            onChange={(e) => setRole(e.target.value)}
            className="field"
          >
            {(!admin || (workspaces?.length ?? 0) > 0) &&
              roles.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            {admin && <option value={instanceOnly}>no workspace (instance only)</option>}
          </select>
        </label>
        {admin && role !== instanceOnly && (
          <label className="space-y-1 text-sm">
            <span>Workspace</span>
            <select data-testid="invite-workspace" name="workspace" className="field" required>
              {workspaces?.map((w) => (
                <option key={w.slug} value={w.slug}>
                  {w.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <label className="space-y-1 text-sm">
          <span>Expires after</span>
          <select data-testid="invite-days" name="days" defaultValue="7" className="field">
            {lifetimes.map((d) => (
              <option key={d} value={d}>
                {d} day{d === 1 ? "" : "s"}
              </option>
            ))}
          </select>
        </label>
        <button data-testid="invite-create" type="submit" className="btn" disabled={busy}>
          {busy ? "Working…" : "Create invitation link"}
        </button>
      </form>
      {created && (
        <div
          className="space-y-2 rounded border border-indigo-200 bg-indigo-50 p-3 text-sm dark:border-indigo-800 dark:bg-indigo-950"
          role="status"
        >
          <p>
            Invitation link for <strong>{created.email}</strong>. Copy it now and send it to them: it is shown only once
            and works once.
          </p>
          <div className="flex items-center gap-2">
            <code
              data-testid="invite-link"
              className="flex-1 break-all rounded bg-white p-2 font-mono text-xs select-all dark:bg-zinc-900"
            >
              {created.link}
            </code>
            <button type="button" className="btn-quiet" onClick={() => void onCopy(created.link)}>
              {copied ? "Copied" : "Copy"}
            </button>
          </div>
        </div>
      )}
      {error && (
        <p data-testid="invite-error" role="status" className="text-sm text-red-600 dark:text-red-400">
          {error}
        </p>
      )}
      {invitations.length === 0 ? (
        <p className="text-xs text-zinc-500">No invitations yet.</p>
      ) : (
        // scrolls inside the card on a phone, never widening the page
        <div className="overflow-x-auto">
          <table className="w-full text-sm">
            <thead className="text-left text-xs text-zinc-500">
              <tr>
                <th className="py-1">Email</th>
                {admin && <th>Workspace</th>}
                <th>Role</th>
                <th>Status</th>
                <th>By</th>
                <th>When</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {invitations.map((inv) => (
                <tr
                  key={inv.id}
                  data-testid="invite-row"
                  data-email={inv.email}
                  data-status={inv.status}
                  className="border-t border-zinc-200 dark:border-zinc-800"
                >
                  <td className="py-2">{inv.email}</td>
                  {admin && <td>{inv.workspace?.name ?? "—"}</td>}
                  <td>{inv.role ?? "account only"}</td>
                  <td>
                    <span className={`rounded px-1.5 py-0.5 text-xs ${statusStyle[inv.status]}`}>{inv.status}</span>
                  </td>
                  <td className="text-xs text-zinc-500">{inv.createdBy}</td>
                  <td className="text-xs text-zinc-500" title={inv.expiresAt}>
                    {inv.status === "used"
                      ? `used ${relative(inv.usedAt ?? inv.createdAt, now)}${inv.usedBy ? ` by ${inv.usedBy}` : ""}`
                      : inv.status === "revoked"
                        ? `revoked ${relative(inv.revokedAt ?? inv.createdAt, now)}`
                        : inv.status === "expired"
                          ? `expired ${relative(inv.expiresAt, now)}`
                          : `expires ${relative(inv.expiresAt, now)}`}
                  </td>
                  <td className="text-right">
                    {inv.status === "pending" && (
                      <button
                        type="button"
                        data-testid="invite-revoke"
                        className="btn-quiet py-1"
                        disabled={busy}
                        onClick={() => void onRevoke(inv.id)}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
