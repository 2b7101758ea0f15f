"use client";

import { networkErrorMessage } from "@/components/network-error";
import { sendForError, sendJson } from "@/components/send-json";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { useHydrated } from "@/components/use-hydrated";

export interface MemberRow {
  userId: string;
  email: string;
  name: string;
  role: "owner" | "editor" | "viewer";
}

const roles = ["owner", "editor", "viewer"] as const;

const send = sendForError;

export function MembersPanel(props: { slug: string; members: MemberRow[]; canManage: boolean; currentUserId: string }) {
  const { slug, members, canManage, currentUserId } = props;
  const router = useRouter();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();
  // an email with no account: offer an invitation with the chosen role instead
  const [offer, setOffer] = useState<{ email: string; role: string }>();
  const [invited, setInvited] = useState<{ email: string; link: string }>();
  const base = `/api/workspaces/${encodeURIComponent(slug)}/members`;

  const [confirming, setConfirming] = useState<string>();

  async function run(action: () => Promise<string | undefined>) {
    setBusy(true);
    setError(undefined);
    let failure: string | undefined;
    try {
      failure = await action();
    } catch {
      // fetch throws when the request never got an answer (offline, server restarting)
      failure = networkErrorMessage;
    } finally {
      setBusy(false);
    }
    if (failure) setError(failure);
    else router.refresh();
    return failure;
  }

  async function remove(member: MemberRow) {
    const self = member.userId === currentUserId;
    const failure = await run(async () => {
      const result = await send(`${base}/${member.userId}`, "DELETE");
      if (!result && self) window.location.assign("/workspaces");
      return result;
    });
    if (!failure) setConfirming(undefined);
  }

  async function onAdd(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    const email = String(form.get("email") ?? "").trim();
    const role = String(form.get("role") ?? "editor");
    setOffer(undefined);
    setInvited(undefined);
    setBusy(true);
    setError(undefined);
    const result = await sendJson(base, "POST", { email, role });
    setBusy(false);
    if (result.status === 404) {
      // the caller manages this workspace, so not_found here means: no account uses that email
      setOffer({ email, role });
      return;
    }
    if (!result.ok) return setError(result.message);
    formEl.reset();
    router.refresh();
  }

  async function onInvite() {
    if (!offer) return;
    setBusy(true);
    setError(undefined);
    const result = await sendJson<{ link: string }>("/api/invitations", "POST", {
      email: offer.email,
      workspaceSlug: slug,
      role: offer.role,
    });
    setBusy(false);
    if (!result.ok) return setError(result.message);
    setInvited({ email: offer.email, link: result.data.link });
    setOffer(undefined);
    router.refresh();
  }

  return (
    <section className="card space-y-4" aria-label="Members">
      <h2 className="text-sm font-medium text-zinc-500">Members</h2>
      <table className="w-full text-sm">
        <thead className="text-left text-xs text-zinc-500">
          <tr>
            <th className="py-1">Name</th>
            <th className="hidden sm:table-cell">Email</th>
            <th>Role</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <tr
              key={m.userId}
              data-testid="member-row"
              data-email={m.email}
              data-role={m.role}
              className="border-t border-zinc-200 dark:border-zinc-800"
            >
              <td className="py-2 pr-2">
                {m.name}
                {/* on a phone the email goes under the name */}
                <span className="block break-all text-xs text-zinc-500 sm:hidden">{m.email}</span>
              </td>
              <td className="hidden pr-2 sm:table-cell">{m.email}</td>
              <td>
                {canManage ? (
                  <select
                    aria-label={`Role of ${m.email}`}
                    data-testid="member-role"
                    className="field w-auto py-1"
                    value={m.role}
                    disabled={busy}
                    onChange={(e) => void run(() => send(`${base}/${m.userId}`, "PATCH", { role: e.target.value }))}
                  >
                    {roles.map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                ) : (
                  m.role
                )}
              </td>
              <td className="text-right">
                {(canManage || m.userId === currentUserId) &&
                  (confirming === m.userId ? (
                    <span
                      role="group"
                      aria-label={m.userId === currentUserId ? "Confirm leaving" : `Confirm removing ${m.email}`}
                      className="inline-flex items-center gap-2"
                    >
                      <span className="text-xs text-zinc-500">
                        {m.userId === currentUserId ? "Leave this workspace?" : `Remove ${m.name}?`}
                      </span>
                      <button
                        type="button"
                        data-testid="member-remove-confirm"
                        className="btn-quiet py-1 text-red-600 dark:text-red-400"
                        disabled={busy}
                        onClick={() => void remove(m)}
                      >
                        {busy ? "Working…" : m.userId === currentUserId ? "Leave" : "Remove"}
                      </button>
                      <button
                        type="button"
                        data-testid="member-remove-cancel"
                        className="btn-quiet py-1"
                        disabled={busy}
                        onClick={() => setConfirming(undefined)}
                      >
                        Cancel
                      </button>
                    </span>
                  ) : (
                    <button
                      type="button"
                      data-testid="member-remove"
                      className="btn-quiet py-1"
                      disabled={busy}
                      onClick={() => {
                        setError(undefined);
                        setConfirming(m.userId);
                      }}
                    >
                      {m.userId === currentUserId ? "Leave" : "Remove"}
                    </button>
                  ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {canManage ? (
        <form onSubmit={onAdd} className="flex flex-wrap items-end gap-3" aria-label="Add a member">
          <label className="min-w-48 flex-1 space-y-1 text-sm">
            <span>Email</span>
            <input data-testid="member-add-email" name="email" type="email" required className="field" />
          </label>
          <label className="space-y-1 text-sm">
            <span>Role</span>
            <select data-testid="member-add-role" name="role" defaultValue="editor" className="field">
              {roles.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </label>
          <button data-testid="member-add-submit" type="submit" className="btn" disabled={busy || !hydrated}>
            Add member
          </button>
        </form>
      ) : (
        <p data-testid="members-readonly" className="text-xs text-zinc-500">
          Only owners can add, change or remove members.
        </p>
      )}
      {offer && (
        <div
          data-testid="member-invite-offer"
          role="status"
          className="flex flex-wrap items-center gap-3 rounded border border-amber-200 bg-amber-50 p-3 text-sm dark:border-amber-800 dark:bg-amber-950"
        >
          <span className="flex-1">
            No account with {offer.email} — invite them as {offer.role}?
          </span>
          <button
            type="button"
            data-testid="member-invite"
            className="btn"
            disabled={busy}
            onClick={() => void onInvite()}
          >
            Create invitation link
          </button>
          <button type="button" className="btn-quiet" onClick={() => setOffer(undefined)}>
            Cancel
          </button>
        </div>
      )}
      {invited && (
        <div
          role="status"
          className="space-y-1 rounded border border-indigo-200 bg-indigo-50 p-3 text-sm dark:border-indigo-800 dark:bg-indigo-950"
        >
          <p>Send this link to {invited.email}; it is shown only once and works once:</p>
          <code data-testid="member-invite-link" className="block break-all font-mono text-xs select-all">
            {invited.link}
          </code>
        </div>
      )}
      {error && (
        <p data-testid="members-error" role="status" className="text-sm text-red-600 dark:text-red-400">
          {error}
        </p>
      )}
    </section>
  );
}
