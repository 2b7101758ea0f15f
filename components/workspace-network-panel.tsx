"use client";

import { networkErrorMessage } from "@/components/network-error";
import { useId, useState } from "react";

type Mode = "open" | "none" | "allowlist";

const modeLabels: Record<Mode, string> = {
  open: "Open: tools reach the network as the server does",
  none: "None: no network for tools (the model still answers)",
  allowlist: "Allow-list: only the domains below (HTTP and HTTPS)",
};

/**
 * The workspace's network policy for the tools of its sessions (Bash, WebFetch, package
 * installs). Owners change it; everyone else sees it read-only. It applies to CLI processes
 * started or restarted after the change, and only where Conduit runs sessions in its sandbox.
 */
export function WorkspaceNetworkPanel(props: { slug: string; mode: Mode; domains: string[]; canEdit: boolean; enforceable: boolean }) {
  const [saved, setSaved] = useState<{ mode: Mode; domains: string[] }>({ mode: props.mode, domains: props.domains });
  const [mode, setMode] = useState<Mode>(props.mode);
  const [domains, setDomains] = useState(props.domains.join("\n"));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const selectId = useId();
  const domainsId = useId();

  async function save() {
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    try {
      const res = await fetch(`/api/workspaces/${encodeURIComponent(props.slug)}/network`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ mode, domains: mode === "allowlist" ? domains.split("\n") : [] }),
      });
      const body = (await res.json().catch(() => null)) as {
        data?: { mode: Mode; domains: string[] };
        error?: { message?: string };
      } | null;
      if (!res.ok || !body?.data) {
        setError(body?.error?.message ?? `The server answered ${res.status}.`);
        return;
      }
      setSaved({ mode: body.data.mode, domains: body.data.domains });
      setMode(body.data.mode);
      setDomains(body.data.domains.join("\n"));
      setNotice("Saved. It applies to sessions started or restarted from now on.");
    } catch {
      setError(networkErrorMessage);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section data-testid="workspace-network" data-mode={saved.mode} className="card space-y-3" aria-labelledby={`${selectId}-heading`}>
      <h2 id={`${selectId}-heading`} className="text-sm font-medium text-zinc-500">
        Network for tools
      </h2>
      <p className="text-sm text-zinc-600 dark:text-zinc-400">
        What Bash, WebFetch and package installs in this workspace&apos;s sessions may reach. A change applies to sessions
        started or restarted after it; running sessions keep the network they started with.
      </p>
      {!props.enforceable && (
        <p role="status" data-testid="workspace-network-unenforced" className="text-sm text-amber-700 dark:text-amber-400">
          Sessions on this server run without a sandbox, so a narrowed network cannot be enforced: sessions of a workspace set
          to “none” or an allow-list are refused until the operator enables the sandbox.
        </p>
      )}
      <div className="space-y-1">
        <label htmlFor={selectId} className="block text-sm">
          Policy
        </label>
        <select
          id={selectId}
          data-testid="workspace-network-policy"
          className="field w-full sm:w-auto"
          value={mode}
          disabled={!props.canEdit || busy}
          onChange={(e) => setMode(e.target.value as Mode)}
        >
          {(Object.keys(modeLabels) as Mode[]).map((m) => (
            <option key={m} value={m}>
              {modeLabels[m]}
            </option>
          ))}
        </select>
      </div>
      {mode === "allowlist" && (
        <div className="space-y-1">
          <label htmlFor={domainsId} className="block text-sm">
            Allowed domains, one per line (<code className="font-mono">*.github.com</code> means every name below github.com;
            IP addresses are not accepted)
          </label>
          <textarea
            id={domainsId}
            data-testid="workspace-network-domains"
            className="field w-full font-mono"
            rows={5}
            value={domains}
            readOnly={!props.canEdit}
            disabled={busy}
            placeholder={"registry.npmjs.org\n*.github.com"}
            onChange={(e) => setDomains(e.target.value)}
          />
        </div>
      )}
      {props.canEdit ? (
        <div className="flex items-center gap-3">
          <button type="button" data-testid="workspace-network-save" className="btn" disabled={busy} onClick={() => void save()}>
            {busy ? "Saving…" : "Save network policy"}
          </button>
          {notice && (
            <span role="status" data-testid="workspace-network-saved" className="text-sm text-zinc-600 dark:text-zinc-400">
              {notice}
            </span>
          )}
          {error && (
            <span role="alert" data-testid="workspace-network-error" className="text-sm text-red-600 dark:text-red-400">
              {error}
            </span>
          )}
        </div>
      ) : (
        <p className="text-sm text-zinc-500">Only the workspace&apos;s owners can change this.</p>
      )}
    </section>
  );
}
