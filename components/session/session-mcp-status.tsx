"use client";

import { memo, useCallback, useEffect, useRef, useState } from "react";
import type { Socket } from "socket.io-client";
import type { McpServerStatus, McpStatusReply, SessionMcpCommand } from "@/server/shared/wire/session-mcp";
import { ackMessage, emitCommand, type CommandName } from "./wire-client";

/** The contract's command name (values cannot be imported from the wire here). */
const mcpCommand = { status: "session:mcp-status" } as const satisfies typeof SessionMcpCommand;

const statusTone: Record<string, string> = {
  connected: "bg-emerald-100 text-emerald-800 dark:bg-emerald-950 dark:text-emerald-300",
  failed: "bg-red-100 text-red-800 dark:bg-red-950 dark:text-red-300",
  pending: "bg-amber-100 text-amber-800 dark:bg-amber-950 dark:text-amber-300",
};

/** Asked again while a server is still connecting, this often, at most this many times. */
const pendingPollMs = 1500;
const maxPendingPolls = 20;

/**
 * The MCP servers of the session's CLI process as it reports them (`mcp_status`): one row per
 * server with its status, its tools, and the error of a failed one. Asked when the page opens,
 * again while a server is pending, and on Refresh. Shown only once the process reports servers
 * (a workspace without any shows nothing). The servers are configured by owners on the
 * workspace page; a change applies to sessions started or restarted after it.
 */
/** Memoized: its props do not change with the session's streamed events. */
export const SessionMcpStatus = memo(function SessionMcpStatus(props: { socket: Socket | undefined; sessionId: string; ready: boolean; slug: string }) {
  const { socket, sessionId, ready } = props;
  const [servers, setServers] = useState<McpServerStatus[]>();
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(false);
  const polls = useRef(0);

  const refresh = useCallback(async () => {
    if (!socket) return;
    setLoading(true);
    const ack = await emitCommand<McpStatusReply>(socket, mcpCommand.status as unknown as CommandName, { sessionId });
    setLoading(false);
    if (ack.ok) {
      setServers(ack.data.servers);
      setError(undefined);
    } else {
      setError(ackMessage(ack));
    }
    return ack.ok ? ack.data.servers : undefined;
  }, [socket, sessionId]);

  useEffect(() => {
    if (!ready) return;
    polls.current = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let cancelled = false;
    const tick = async () => {
      const list = await refresh();
      if (cancelled) return;
      if (list?.some((s) => s.status === "pending") && (polls.current += 1) < maxPendingPolls) timer = setTimeout(() => void tick(), pendingPollMs);
    };
    void tick();
    return () => {
      cancelled = true;
      if (timer) clearTimeout(timer);
    };
  }, [ready, refresh]);

  if (servers === undefined || servers.length === 0) return null;
  const failed = servers.filter((s) => s.status === "failed").length;
  return (
    <details data-testid="session-mcp" className="rounded-md border border-zinc-200 px-3 py-1.5 text-xs dark:border-zinc-800" open={failed > 0}>
      <summary className="cursor-pointer text-zinc-600 dark:text-zinc-400">
        MCP servers: {servers.length}
        {failed > 0 ? <span className="text-red-700 dark:text-red-400"> · {failed} failed</span> : null}
      </summary>
      <ul className="mt-2 space-y-1.5" aria-live="polite">
        {servers.map((s) => (
          <li key={s.name} data-testid="mcp-server-row" data-name={s.name} data-status={s.status} className="space-y-0.5">
            <div className="flex flex-wrap items-center gap-2">
              <span className="font-mono text-zinc-800 dark:text-zinc-200">{s.name}</span>
              <span className={`rounded px-1.5 py-0.5 ${statusTone[s.status] ?? "bg-zinc-100 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300"}`}>{s.status}</span>
              {s.transport && <span className="text-zinc-500">{s.transport}</span>}
              {s.tools.length > 0 && (
                <span className="text-zinc-500" title={s.tools.join(", ")}>
                  {s.tools.length === 1 ? "1 tool" : `${s.tools.length} tools`}: <span className="font-mono">{s.tools.slice(0, 6).join(", ")}{s.tools.length > 6 ? ", …" : ""}</span>
                </span>
              )}
            </div>
            {s.error && (
              <p data-testid="mcp-server-error" className="font-mono break-all text-red-700 dark:text-red-400">
                {s.error}
              </p>
            )}
          </li>
        ))}
      </ul>
      <div className="mt-2 flex flex-wrap items-center gap-3">
        <button type="button" data-testid="mcp-status-refresh" className="btn py-0.5 text-xs" disabled={loading || !socket} onClick={() => void refresh()}>
          {loading ? "Asking…" : "Refresh"}
        </button>
        <span className="text-zinc-500">
          Configured on the{" "}
          <a className="underline" href={`/w/${encodeURIComponent(props.slug)}#mcp-servers`}>
            workspace page
          </a>
          ; changes apply to sessions started or restarted after them.
        </span>
        {error && (
          <span role="alert" data-testid="mcp-status-error" className="text-red-700 dark:text-red-400">
            {error}
          </span>
        )}
      </div>
    </details>
  );
});
