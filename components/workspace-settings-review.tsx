"use client";

import { networkErrorMessage } from "@/components/network-error";
import { useState } from "react";

/** One settings file as the review sees it (structurally the domain's SettingsFileReview). */
interface ReviewedFile {
  file: string;
  present: boolean;
  problem?: string;
  allow: string[];
  defaultMode?: string;
  hooks: { event: string; matcher: string | undefined; command: string }[];
  mcpServers: string[];
  otherKeys: string[];
}

/**
 * What the workspace's own Claude settings (`.claude/settings*.json`, `.mcp.json`) would add if
 * trusted. Sessions run without them (no allow rules, no hooks; CLAUDE.md is still read) until an
 * owner trusts these exact contents; a later change to the files ends the trust by itself.
 */
export function WorkspaceSettingsReview(props: {
  slug: string;
  files: ReviewedFile[];
  grantsAnything: boolean;
  digest: string;
  trusted: boolean;
}) {
  const present = props.files.filter((f) => f.present);
  const [trusted, setTrusted] = useState(props.trusted);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  async function change(trust: boolean) {
    setBusy(true);
    setError(undefined);
    try {
      const res = await fetch(`/api/workspaces/${encodeURIComponent(props.slug)}/settings-review`, {
        method: trust ? "POST" : "DELETE",
        headers: { "content-type": "application/json" },
        ...(trust ? { body: JSON.stringify({ digest: props.digest }) } : {}),
      });
      const body = (await res.json().catch(() => null)) as {
        data?: { trusted: boolean };
        error?: { message?: string };
      } | null;
      if (!res.ok || !body?.data) {
        setError(body?.error?.message ?? `The server answered ${res.status}.`);
        return;
      }
      setTrusted(body.data.trusted);
    } catch {
      setError(networkErrorMessage);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section
      data-testid="workspace-settings-review"
      data-grants={props.grantsAnything ? "yes" : "no"}
      data-trusted={trusted ? "yes" : "no"}
      className="card space-y-3"
      aria-label="Claude settings in this workspace"
    >
      <h2 className="text-sm font-medium text-zinc-500">Claude settings in this workspace</h2>
      {present.length === 0 ? (
        <p className="text-sm text-zinc-500">
          No <code className="font-mono">.claude/settings.json</code>,{" "}
          <code className="font-mono">settings.local.json</code> or <code className="font-mono">.mcp.json</code> here.
        </p>
      ) : (
        <>
          {trusted ? (
            <p className="text-sm text-amber-700 dark:text-amber-400">
              Trusted: new sessions load these files as they are now, so the rules below skip Conduit&apos;s approvals
              and the hooks run. Any change to the files ends the trust until an owner reviews them again.
            </p>
          ) : (
            <p className="text-sm text-zinc-600 dark:text-zinc-400">
              Not loaded: sessions here run without these files, so their allow rules do not skip Conduit&apos;s
              approvals and their hooks do not run. <code className="font-mono">CLAUDE.md</code> is still read. Trusting
              them would add:
            </p>
          )}
          <ul className="space-y-2 text-sm">
            {present.map((f) => (
              <li
                key={f.file}
                data-testid="workspace-settings-file"
                data-file={f.file}
                className="rounded border border-zinc-200 p-2 dark:border-zinc-800"
              >
                <div className="font-mono">{f.file}</div>
                {f.problem && <div className="text-amber-700 dark:text-amber-400">{f.problem}</div>}
                {f.allow.length > 0 && (
                  <div>
                    runs without asking:{" "}
                    {f.allow.map((rule) => (
                      <code
                        key={rule}
                        data-testid="workspace-settings-allow"
                        className="mr-1 rounded bg-zinc-100 px-1 font-mono dark:bg-zinc-800"
                      >
                        {rule}
                      </code>
                    ))}
                  </div>
                )}
                {f.defaultMode && (
                  <div>
                    default mode: <code className="font-mono">{f.defaultMode}</code>
                  </div>
                )}
                {f.hooks.map((hook, i) => (
                  <div key={i} data-testid="workspace-settings-hook">
                    runs on {hook.event}
                    {hook.matcher ? ` (${hook.matcher})` : ""}:{" "}
                    <code className="font-mono break-all">{hook.command}</code>
                  </div>
                ))}
                {f.mcpServers.length > 0 && <div>starts MCP servers: {f.mcpServers.join(", ")}</div>}
                {f.otherKeys.length > 0 && <div>also sets: {f.otherKeys.join(", ")}</div>}
              </li>
            ))}
          </ul>
          <div className="flex items-center gap-3">
            {trusted ? (
              <button
                type="button"
                data-testid="workspace-settings-untrust"
                className="btn-quiet"
                disabled={busy}
                onClick={() => void change(false)}
              >
                {busy ? "Saving…" : "Stop trusting"}
              </button>
            ) : (
              <button
                type="button"
                data-testid="workspace-settings-trust"
                className="btn"
                disabled={busy}
                onClick={() => void change(true)}
              >
                {busy ? "Saving…" : "Trust these settings"}
              </button>
            )}
            {error && (
              <span
                role="alert"
                data-testid="workspace-settings-error"
                className="text-sm text-red-600 dark:text-red-400"
              >
                {error}
              </span>
            )}
          </div>
        </>
      )}
    </section>
  );
}
