"use client";

import { networkErrorMessage } from "@/components/network-error";
import { useState } from "react";

/** One file as the review sees it (structurally the domain's SettingsFileReview). */
interface ReviewedFile {
  file: string;
  /** `settings`, `skill`, `command`, `agent`, or `other` (another file of the `.claude/` trees). */
  kind?: string;
  present: boolean;
  problem?: string;
  allow: string[];
  defaultMode?: string;
  hooks: { event: string; matcher: string | undefined; command: string }[];
  mcpServers: string[];
  otherKeys: string[];
  env?: Record<string, string>;
  frontMatter?: string;
}

// Variables that send the CLI's traffic (and the key it carries) elsewhere, or change what it runs.
const redirecting = /^(ANTHROPIC_|CLAUDE_CODE_USE_|HTTPS?_PROXY$|ALL_PROXY$|NO_PROXY$|NODE_|OTEL_|AWS_|GOOGLE_|VERTEX_)/i;

const allowLabel: Record<string, string> = {
  skill: "once the skill is invoked, runs without asking:",
  command: "when the command is typed, runs without asking:",
};

/**
 * What the workspace's own Claude configuration (`.claude/settings*.json`, `.mcp.json`, and the
 * skills, commands, agents and other files under `.claude/`) would add if trusted. Sessions run
 * without any of it (no allow rules, hooks, env, helper commands, skills, commands or agents;
 * CLAUDE.md is still read) until an owner trusts these exact contents; a later change to any of
 * the files ends the trust by itself.
 */
export function WorkspaceSettingsReview(props: {
  slug: string;
  files: ReviewedFile[];
  grantsAnything: boolean;
  digest: string;
  trusted: boolean;
}) {
  // A tree's plain files are folded away unless they could not be read.
  const present = props.files.filter((f) => f.present && (f.kind !== "other" || f.problem));
  const others = props.files.filter((f) => f.present && f.kind === "other" && !f.problem);
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
      {present.length === 0 && others.length === 0 ? (
        <p className="text-sm text-zinc-500">
          No <code className="font-mono">.claude/settings.json</code>,{" "}
          <code className="font-mono">settings.local.json</code>, <code className="font-mono">.mcp.json</code>, skills,
          commands or agents here.
        </p>
      ) : (
        <>
          {trusted ? (
            <p className="text-sm text-amber-700 dark:text-amber-400">
              Trusted: new sessions load these files as they are now, so the rules below skip Conduit&apos;s approvals,
              the hooks and helper commands run, the environment variables are set, and the skills, commands and
              agents load. Any change to the files ends the trust until an owner reviews them again.
            </p>
          ) : (
            <p className="text-sm text-zinc-600 dark:text-zinc-400">
              Not loaded: sessions here run without these files, so their allow rules do not skip Conduit&apos;s
              approvals, their hooks and helper commands do not run, their environment variables are not set, and the
              skills, commands and agents under <code className="font-mono">.claude/</code> are not loaded.{" "}
              <code className="font-mono">CLAUDE.md</code> is still read. Trusting them would add:
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
                <div className="font-mono">
                  {f.file}
                  {f.kind && f.kind !== "settings" && <span className="ml-2 font-sans text-zinc-500">({f.kind})</span>}
                </div>
                {f.problem && <div className="text-amber-700 dark:text-amber-400">{f.problem}</div>}
                {f.allow.length > 0 && (
                  <div>
                    {allowLabel[f.kind ?? ""] ?? "runs without asking:"}{" "}
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
                    {f.kind === "agent" ? "subagent permission mode" : "default mode"}:{" "}
                    <code className="font-mono">{f.defaultMode}</code>
                  </div>
                )}
                {f.env &&
                  Object.entries(f.env).map(([name, value]) => (
                    <div
                      key={name}
                      data-testid="workspace-settings-env"
                      className={redirecting.test(name) ? "text-amber-700 dark:text-amber-400" : undefined}
                    >
                      sets <code className="font-mono break-all">{`${name}=${value}`}</code>
                      {redirecting.test(name) ? " (changes where the CLI sends its traffic or what it runs)" : ""}
                    </div>
                  ))}
                {f.hooks.map((hook, i) => (
                  <div key={i} data-testid="workspace-settings-hook">
                    runs on {hook.event}
                    {hook.matcher ? ` (${hook.matcher})` : ""}:{" "}
                    <code className="font-mono break-all">{hook.command}</code>
                  </div>
                ))}
                {f.mcpServers.length > 0 && <div>starts MCP servers: {f.mcpServers.join(", ")}</div>}
                {f.otherKeys.length > 0 && <div>also sets: {f.otherKeys.join(", ")}</div>}
                {f.frontMatter !== undefined && (
                  <details>
                    <summary className="cursor-pointer text-zinc-500">front matter as written</summary>
                    <pre className="overflow-x-auto font-mono text-xs whitespace-pre-wrap">{f.frontMatter}</pre>
                  </details>
                )}
              </li>
            ))}
          </ul>
          {others.length > 0 && (
            <details className="text-sm" data-testid="workspace-settings-other-files">
              <summary className="cursor-pointer">
                {others.length} more {others.length === 1 ? "file" : "files"} loaded with them (part of what is trusted)
              </summary>
              <ul className="font-mono text-xs">
                {others.map((f) => (
                  <li key={f.file} data-file={f.file}>
                    {f.file}
                  </li>
                ))}
              </ul>
            </details>
          )}
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
