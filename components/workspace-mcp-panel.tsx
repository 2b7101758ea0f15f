"use client";

import { useId, useState } from "react";
import { sendJson } from "@/components/send-json";
import type { McpServerView } from "@/server/shared/wire/session-mcp";

type Transport = "stdio" | "http";

/** One key-value row of the form; `stored` rows have a value on the server the browser never sees. */
interface SecretRow {
  key: number;
  name: string;
  value: string;
  stored: boolean;
}

interface Draft {
  name: string;
  transport: Transport;
  command: string;
  args: string;
  url: string;
  secrets: SecretRow[];
  enabled: boolean;
}

let rowKey = 0;
const nextKey = () => (rowKey += 1);

const emptyDraft: Draft = { name: "", transport: "stdio", command: "", args: "", url: "", secrets: [], enabled: true };

function draftOf(server: McpServerView): Draft {
  const names = server.transport === "stdio" ? server.env : server.headers;
  return {
    name: server.name,
    transport: server.transport,
    command: server.command ?? "",
    args: server.args.join("\n"),
    url: server.url ?? "",
    secrets: names.map((n) => ({ key: nextKey(), name: n.name, value: "", stored: true })),
    enabled: server.enabled,
  };
}

/** The request body: a stored secret left blank is sent without a value (the server keeps it). */
function bodyOf(draft: Draft, creating: boolean): Record<string, unknown> {
  const entries = draft.secrets
    .filter((s) => s.name.trim() !== "" || s.value !== "")
    .map((s) => (s.stored && s.value === "" ? { name: s.name.trim() } : { name: s.name.trim(), value: s.value }));
  const args = draft.args.split("\n").map((a) => a.trim()).filter((a) => a !== "");
  const common = { name: draft.name.trim(), enabled: draft.enabled };
  if (draft.transport === "stdio") return { ...(creating ? { transport: "stdio" } : {}), ...common, command: draft.command, args, env: entries };
  return { ...(creating ? { transport: "http" } : {}), ...common, url: draft.url, headers: entries };
}

/**
 * The workspace's MCP servers (stdio commands and HTTP endpoints) that its sessions' CLI
 * processes get. Owners add, edit, enable or disable and delete them; everyone else reads them.
 * Environment variables and headers are secrets: their values are written, never shown again
 * (a stored value stays unless a new one is typed). Changes apply to sessions started or
 * restarted after them.
 */
export function WorkspaceMcpPanel(props: { slug: string; servers: McpServerView[]; canEdit: boolean }) {
  const [servers, setServers] = useState(props.servers);
  const [editing, setEditing] = useState<{ id?: string; draft: Draft }>();
  const [confirmDelete, setConfirmDelete] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const headingId = useId();
  const base = `/api/workspaces/${encodeURIComponent(props.slug)}/mcp`;

  function replace(server: McpServerView) {
    setServers((list) => [...list.filter((s) => s.id !== server.id), server].sort((a, b) => a.name.localeCompare(b.name)));
  }

  async function save() {
    if (!editing) return;
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    const creating = editing.id === undefined;
    const result = await sendJson<McpServerView>(creating ? base : `${base}/${encodeURIComponent(editing.id!)}`, creating ? "POST" : "PATCH", bodyOf(editing.draft, creating));
    setBusy(false);
    if (!result.ok) {
      setError(result.message);
      return;
    }
    replace(result.data);
    setEditing(undefined);
    setNotice(`Saved ${result.data.name}. Sessions started or restarted from now on get it.`);
  }

  async function setEnabled(server: McpServerView, enabled: boolean) {
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    const result = await sendJson<McpServerView>(`${base}/${encodeURIComponent(server.id)}`, "PATCH", { enabled });
    setBusy(false);
    if (!result.ok) setError(result.message);
    else replace(result.data);
  }

  async function remove(server: McpServerView) {
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    const result = await sendJson(`${base}/${encodeURIComponent(server.id)}`, "DELETE");
    setBusy(false);
    setConfirmDelete(undefined);
    if (!result.ok) {
      setError(result.message);
      return;
    }
    setServers((list) => list.filter((s) => s.id !== server.id));
    setNotice(`Deleted ${server.name}.`);
  }

  return (
    <section id="mcp-servers" data-testid="workspace-mcp" className="card space-y-3" aria-labelledby={headingId}>
      <h2 id={headingId} className="text-sm font-medium text-zinc-500">
        MCP servers
      </h2>
      <p className="text-sm text-zinc-600 dark:text-zinc-400">
        Tools from MCP servers for this workspace&apos;s sessions. Stdio servers run inside each session&apos;s sandbox (their
        command must exist there: system programs, or files in the workspace). A change applies to sessions started or restarted
        after it. Environment variables and headers are stored encrypted and never shown again.
      </p>
      {servers.length === 0 ? (
        <p className="text-sm text-zinc-500" data-testid="mcp-config-empty">
          No MCP servers yet.
        </p>
      ) : (
        <ul className="divide-y divide-zinc-200 dark:divide-zinc-800">
          {servers.map((server) => {
            const secrets = server.transport === "stdio" ? server.env : server.headers;
            return (
              <li key={server.id} data-testid="mcp-config-row" data-name={server.name} data-enabled={server.enabled} className="space-y-1 py-2 text-sm">
                <div className="flex flex-wrap items-center gap-2">
                  <span className="font-mono font-medium">{server.name}</span>
                  <span className="rounded bg-zinc-100 px-1.5 py-0.5 text-xs dark:bg-zinc-800">{server.transport}</span>
                  {!server.enabled && <span className="text-xs text-zinc-500">disabled</span>}
                  <span className="min-w-0 truncate font-mono text-xs text-zinc-600 dark:text-zinc-400" title={server.transport === "stdio" ? [server.command, ...server.args].join(" ") : (server.url ?? "")}>
                    {server.transport === "stdio" ? [server.command, ...server.args].join(" ") : server.url}
                  </span>
                </div>
                {server.secretsUnreadable && (
                  <p role="alert" className="text-xs text-red-600 dark:text-red-400">
                    Its stored {server.transport === "stdio" ? "environment values" : "header values"} cannot be read (the server&apos;s secret key
                    changed): edit it and enter them again. Sessions start without this server until then.
                  </p>
                )}
                {secrets.length > 0 && (
                  <p className="text-xs text-zinc-500">
                    {server.transport === "stdio" ? "Environment: " : "Headers: "}
                    {secrets.map((s) => (
                      <span key={s.name} data-testid="mcp-secret-name" className="mr-2 font-mono">
                        {s.name}=<span aria-label="value hidden">••••••</span>
                      </span>
                    ))}
                  </p>
                )}
                {props.canEdit && (
                  <div className="flex flex-wrap items-center gap-2">
                    <label className="flex items-center gap-1 text-xs">
                      <input
                        type="checkbox"
                        data-testid="mcp-enabled"
                        checked={server.enabled}
                        disabled={busy}
                        onChange={(e) => void setEnabled(server, e.target.checked)}
                      />
                      enabled
                    </label>
                    <button
                      type="button"
                      data-testid="mcp-edit"
                      className="btn py-0.5 text-xs"
                      disabled={busy}
                      onClick={() => {
                        setError(undefined);
                        setEditing({ id: server.id, draft: draftOf(server) });
                      }}
                    >
                      Edit
                    </button>
                    {confirmDelete === server.id ? (
                      <span className="flex items-center gap-2 text-xs" role="group" aria-label={`Delete ${server.name}?`}>
                        Delete {server.name}?
                        <button type="button" data-testid="mcp-delete-confirm" className="btn py-0.5 text-xs" disabled={busy} onClick={() => void remove(server)}>
                          Delete
                        </button>
                        <button type="button" className="btn py-0.5 text-xs" disabled={busy} onClick={() => setConfirmDelete(undefined)}>
                          Keep
                        </button>
                      </span>
                    ) : (
                      <button type="button" data-testid="mcp-delete" className="btn py-0.5 text-xs" disabled={busy} onClick={() => setConfirmDelete(server.id)}>
                        Delete…
                      </button>
                    )}
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {props.canEdit ? (
        editing ? (
          <McpServerForm
            draft={editing.draft}
            creating={editing.id === undefined}
            busy={busy}
            onChange={(draft) => setEditing({ ...editing, draft })}
            onSave={() => void save()}
            onCancel={() => {
              setEditing(undefined);
              setError(undefined);
            }}
          />
        ) : (
          <button
            type="button"
            data-testid="mcp-add"
            className="btn"
            disabled={busy}
            onClick={() => {
              setNotice(undefined);
              setError(undefined);
              setEditing({ draft: { ...emptyDraft, secrets: [] } });
            }}
          >
            Add MCP server
          </button>
        )
      ) : (
        <p className="text-sm text-zinc-500" data-testid="mcp-read-only">
          Only the workspace&apos;s owners can change these.
        </p>
      )}
      {notice && (
        <p role="status" data-testid="mcp-saved" className="text-sm text-zinc-600 dark:text-zinc-400">
          {notice}
        </p>
      )}
      {error && (
        <p role="alert" data-testid="mcp-error" className="text-sm text-red-600 dark:text-red-400">
          {error}
        </p>
      )}
    </section>
  );
}

function McpServerForm(props: { draft: Draft; creating: boolean; busy: boolean; onChange: (draft: Draft) => void; onSave: () => void; onCancel: () => void }) {
  const { draft, onChange } = props;
  const id = useId();
  const set = (patch: Partial<Draft>) => onChange({ ...draft, ...patch });
  const setSecret = (key: number, patch: Partial<SecretRow>) => set({ secrets: draft.secrets.map((s) => (s.key === key ? { ...s, ...patch } : s)) });
  const secretWord = draft.transport === "stdio" ? "environment variable" : "header";
  return (
    <form
      data-testid="mcp-form"
      className="space-y-3 rounded-md border border-zinc-200 p-3 dark:border-zinc-800"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSave();
      }}
      onKeyDown={(e) => {
        if (e.key === "Escape") props.onCancel();
      }}
    >
      <div className="flex flex-wrap gap-3">
        <div className="space-y-1">
          <label htmlFor={`${id}-name`} className="block text-sm">
            Name
          </label>
          <input
            id={`${id}-name`}
            data-testid="mcp-name"
            className="field w-48 font-mono"
            value={draft.name}
            autoFocus
            required
            maxLength={64}
            pattern="[A-Za-z0-9_\-]{1,64}"
            title="Letters, digits, '_' or '-'"
            onChange={(e) => set({ name: e.target.value })}
          />
        </div>
        <div className="space-y-1">
          <label htmlFor={`${id}-transport`} className="block text-sm">
            Transport
          </label>
          <select
            id={`${id}-transport`}
            data-testid="mcp-transport"
            className="field w-auto"
            value={draft.transport}
            disabled={!props.creating}
            onChange={(e) => set({ transport: e.target.value as Transport, secrets: [] })}
          >
            <option value="stdio">stdio (a command)</option>
            <option value="http">HTTP (a URL)</option>
          </select>
        </div>
      </div>
      {draft.transport === "stdio" ? (
        <>
          <div className="space-y-1">
            <label htmlFor={`${id}-command`} className="block text-sm">
              Command
            </label>
            <input id={`${id}-command`} data-testid="mcp-command" className="field w-full font-mono" value={draft.command} required onChange={(e) => set({ command: e.target.value })} placeholder="/usr/bin/node" />
          </div>
          <div className="space-y-1">
            <label htmlFor={`${id}-args`} className="block text-sm">
              Arguments, one per line
            </label>
            <textarea id={`${id}-args`} data-testid="mcp-args" className="field w-full font-mono" rows={3} value={draft.args} onChange={(e) => set({ args: e.target.value })} />
          </div>
        </>
      ) : (
        <div className="space-y-1">
          <label htmlFor={`${id}-url`} className="block text-sm">
            URL (http or https)
          </label>
          <input id={`${id}-url`} data-testid="mcp-url" type="url" className="field w-full font-mono" value={draft.url} required onChange={(e) => set({ url: e.target.value })} placeholder="https://mcp.example.com/mcp" />
        </div>
      )}
      <fieldset className="space-y-2">
        <legend className="text-sm">{draft.transport === "stdio" ? "Environment variables" : "Headers"} (values are secret)</legend>
        {draft.secrets.map((s, i) => (
          <div key={s.key} data-testid="mcp-secret-row" className="flex flex-wrap items-center gap-2">
            <input
              aria-label={`${secretWord} ${i + 1} name`}
              data-testid="mcp-secret-key"
              className="field w-48 font-mono"
              value={s.name}
              readOnly={s.stored}
              onChange={(e) => setSecret(s.key, { name: e.target.value })}
              placeholder={draft.transport === "stdio" ? "API_TOKEN" : "Authorization"}
            />
            <input
              aria-label={`${secretWord} ${i + 1} value`}
              data-testid="mcp-secret-value"
              type="password"
              autoComplete="off"
              className="field w-64 font-mono"
              value={s.value}
              onChange={(e) => setSecret(s.key, { value: e.target.value })}
              placeholder={s.stored ? "•••••• (unchanged)" : "value"}
            />
            <button type="button" className="btn py-0.5 text-xs" aria-label={`Remove ${s.name || `${secretWord} ${i + 1}`}`} onClick={() => set({ secrets: draft.secrets.filter((x) => x.key !== s.key) })}>
              Remove
            </button>
          </div>
        ))}
        <button type="button" data-testid="mcp-secret-add" className="btn py-0.5 text-xs" onClick={() => set({ secrets: [...draft.secrets, { key: nextKey(), name: "", value: "", stored: false }] })}>
          Add {secretWord}
        </button>
      </fieldset>
      <label className="flex items-center gap-2 text-sm">
        <input type="checkbox" checked={draft.enabled} onChange={(e) => set({ enabled: e.target.checked })} />
        Enabled
      </label>
      <div className="flex items-center gap-2">
        <button type="submit" data-testid="mcp-save" className="btn" disabled={props.busy}>
          {props.busy ? "Saving…" : props.creating ? "Add server" : "Save changes"}
        </button>
        <button type="button" data-testid="mcp-cancel" className="btn" disabled={props.busy} onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
