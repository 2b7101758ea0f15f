"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import type { PermissionModeChoice, SessionView, WatchWorkspaceResult } from "@/server/shared/wire/session";
import { formatCount } from "@/components/format/money";
import { useHydrated } from "@/components/use-hydrated";
import { formatRelative, formatTokens, formatUsd, sessionTitle } from "./format";
import { modeChoices, modeLabel } from "./modes";
import { NewSessionModel } from "./prompt/new-session-model";
import { StatusBadge } from "./status-badge";
import { ConnectionNotice, useSocket } from "./use-socket";
import { ackMessage, command, emitCommand, fact, newCommandId } from "./wire-client";
import {
  SessionListFilters,
  emptyFilters,
  filtersQuery,
  isDefaultFilters,
  type SessionFilters,
} from "./session-list-filters";
import type { SessionRemoved } from "@/server/shared/wire/session-manage";

export interface SessionListProps {
  slug: string;
  initialSessions: SessionView[];
  /** Each session's first prompt, shown as its title when it has none. */
  firstPrompts: Record<string, string>;
  /** Why this user may not start sessions (viewers); undefined when they may. */
  createRefusal?: string;
  /** The workspace owner allowed bypassPermissions. */
  bypassAllowed: boolean;
  defaultMode: string;
  /** The cursor of the second page; null when the first page holds every session. */
  initialNextCursor?: string | null;
  /** The workspace's members, for the creator filter. */
  members?: readonly { userId: string; name: string }[];
  /** The workspace is a git repository: a new session may start in its own worktree. */
  worktreeAvailable?: boolean;
}

interface ListPage {
  sessions: SessionView[];
  firstPrompts: Record<string, string>;
  nextCursor: string | null;
}

/** A status fact: a whole SessionView, or a partial one naming its session. */
type StatusFact = Partial<SessionView> & { sessionId?: string };

function upsert(list: SessionView[], fact: StatusFact): SessionView[] | "unknown" {
  const id = fact.id ?? fact.sessionId;
  if (!id) return list;
  const at = list.findIndex((s) => s.id === id);
  const { sessionId: _omit, ...fields } = fact;
  if (at >= 0) return list.map((s, i) => (i === at ? mergeView(s, fields, id) : s));
  // A session the list does not hold (new, or archived and left out): the database decides
  // whether it belongs under the current filters, so the caller refetches.
  return "unknown";
}

/**
 * A fact over what the list holds. Cost and tokens only grow within a session, so the larger
 * figure wins: the sidecar's live view counts only what its accounting has written so far.
 */
function mergeView(held: SessionView, fields: Partial<SessionView>, id: string): SessionView {
  const next = { ...held, ...fields, id };
  next.costUsd = Math.max(held.costUsd, fields.costUsd ?? 0);
  if (fields.tokens) {
    next.tokens = {
      input: Math.max(held.tokens.input, fields.tokens.input),
      output: Math.max(held.tokens.output, fields.tokens.output),
      cacheRead: Math.max(held.tokens.cacheRead, fields.tokens.cacheRead),
      cacheWrite: Math.max(held.tokens.cacheWrite, fields.tokens.cacheWrite),
    };
  }
  return next;
}

function sortSessions(list: SessionView[]): SessionView[] {
  return [...list].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/** The workspace's sessions, live, with the "new session" action. */
export function SessionList({
  slug,
  initialSessions,
  firstPrompts,
  createRefusal,
  bypassAllowed,
  defaultMode,
  initialNextCursor = null,
  members = [],
  worktreeAvailable,
}: SessionListProps) {
  const state = useSocket();
  const { socket } = state;
  const [sessions, setSessions] = useState(() => sortSessions(initialSessions));
  const [prompts, setPrompts] = useState(firstPrompts);
  const [nextCursor, setNextCursor] = useState<string | null>(initialNextCursor);
  const [filters, setFilters] = useState<SessionFilters>(emptyFilters);
  const [loading, setLoading] = useState<"first" | "more">();
  const [loadError, setLoadError] = useState<string>();
  const [watchError, setWatchError] = useState<string>();
  const refetchTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const filtersRef = useRef(filters);
  const loaded = useRef(0);
  const generation = useRef(0);

  useEffect(() => {
    filtersRef.current = filters;
  }, [filters]);
  useEffect(() => {
    loaded.current = sessions.length;
  }, [sessions.length]);

  /** Reads one page with the current filters: the first (replacing the list) or the next. */
  const load = useCallback(
    async (which: "first" | "more", cursor?: string, limit?: number) => {
      const mine = ++generation.current;
      setLoading(which);
      setLoadError(undefined);
      const params = filtersQuery(filtersRef.current);
      if (cursor) params.set("cursor", cursor);
      if (limit) params.set("limit", String(limit));
      try {
        const res = await fetch(`/api/workspaces/${encodeURIComponent(slug)}/sessions?${params.toString()}`);
        const body = (await res.json().catch(() => null)) as {
          data?: ListPage;
          error?: { message?: string };
        } | null;
        if (mine !== generation.current) return;
        if (!res.ok || !body?.data) {
          setLoadError(body?.error?.message ?? `The sessions could not be loaded (HTTP ${res.status}).`);
          return;
        }
        const page = body.data;
        setPrompts((p) => ({ ...(which === "first" ? {} : p), ...page.firstPrompts }));
        setSessions((current) =>
          which === "first"
            ? sortSessions(page.sessions)
            : sortSessions([...current, ...page.sessions.filter((s) => !current.some((c) => c.id === s.id))]),
        );
        setNextCursor(page.nextCursor);
      } catch {
        if (mine === generation.current)
          setLoadError("The sessions could not be loaded: the network failed. Try again.");
      } finally {
        if (mine === generation.current) setLoading(undefined);
      }
    },
    [slug],
  );

  const refetch = useCallback(() => {
    clearTimeout(refetchTimer.current);
    // the pages already shown, read again in one go
    refetchTimer.current = setTimeout(
      () => void load("first", undefined, Math.min(Math.max(loaded.current, 50), 200)),
      250,
    );
  }, [load]);

  const onFilters = useCallback(
    (next: SessionFilters) => {
      const typed = next.q !== filtersRef.current.q;
      setFilters(next);
      filtersRef.current = next;
      clearTimeout(refetchTimer.current);
      // typing waits for a pause; a choice in a menu loads at once
      refetchTimer.current = setTimeout(() => void load("first"), typed ? 300 : 0);
    },
    [load],
  );

  useEffect(() => {
    if (!socket) return;
    let alive = true;
    let reconnected = false;
    const watch = async () => {
      const ack = await emitCommand<WatchWorkspaceResult>(socket, command.watchWorkspace, { workspace: slug });
      if (!alive) return;
      if (!ack.ok) {
        setWatchError(`Live updates are off: ${ackMessage(ack)}`);
        return;
      }
      setWatchError(undefined);
      // The reply holds only the sessions the sidecar has live; the rest come from the database.
      setSessions((current) => {
        let next = current;
        let unknown = false;
        for (const view of ack.data.sessions ?? []) {
          const merged = upsert(next, view);
          if (merged === "unknown") unknown = true;
          else next = merged;
        }
        if (unknown) refetch();
        return next;
      });
      // Statuses may have changed while this page was disconnected.
      if (reconnected) refetch();
      reconnected = true;
    };
    const onStatus = (payload: StatusFact) => {
      setSessions((current) => {
        const next = upsert(current, payload);
        if (next === "unknown") {
          refetch();
          return current;
        }
        return next;
      });
    };
    // archived, unarchived or deleted (session-manage): leaves the list it no longer belongs to
    const onRemoved = (payload: SessionRemoved & { archived?: boolean }) => {
      const view = filtersRef.current.archived;
      const gone =
        payload.archived === undefined ||
        (payload.archived && view === "active") ||
        (!payload.archived && view === "archived");
      if (gone) setSessions((current) => current.filter((s) => s.id !== payload.sessionId));
      else refetch();
    };
    socket.on("connect", watch);
    socket.on(fact.status, onStatus);
    socket.on("session:removed", onRemoved);
    if (socket.connected) void watch();
    return () => {
      alive = false;
      clearTimeout(refetchTimer.current);
      socket.off("connect", watch);
      socket.off(fact.status, onStatus);
      socket.off("session:removed", onRemoved);
    };
  }, [socket, slug, refetch]);

  return (
    <section className="card space-y-4" aria-labelledby="sessions-heading">
      <div className="flex flex-wrap items-center gap-3">
        <h2 id="sessions-heading" className="text-sm font-medium text-zinc-500">
          Sessions
        </h2>
        <ConnectionNotice state={state} />
        <div className="ml-auto">
          {createRefusal === undefined && (
            <NewSession slug={slug} bypassAllowed={bypassAllowed} defaultMode={defaultMode} worktreeAvailable={worktreeAvailable} />
          )}
        </div>
      </div>
      {createRefusal !== undefined && (
        <p data-testid="session-new-refusal" className="text-xs text-zinc-500">
          {createRefusal}
        </p>
      )}
      {watchError && (
        <p role="status" className="text-xs text-amber-700 dark:text-amber-400">
          {watchError}
        </p>
      )}
      <SessionListFilters filters={filters} members={members} onChange={onFilters} busy={loading === "first"} />
      <SessionTable slug={slug} sessions={sessions} firstPrompts={prompts} filtered={!isDefaultFilters(filters)} />
      {loadError && (
        <p role="alert" data-testid="session-list-error" className="text-sm text-red-600 dark:text-red-400">
          {loadError}{" "}
          <button
            type="button"
            className="underline"
            onClick={() =>
              void load(
                sessions.length > 0 && nextCursor ? "more" : "first",
                sessions.length > 0 ? (nextCursor ?? undefined) : undefined,
              )
            }
          >
            Retry
          </button>
        </p>
      )}
      {nextCursor && (
        <div className="flex justify-center">
          <button
            type="button"
            data-testid="session-list-more"
            className="btn-quiet py-1.5 text-sm"
            disabled={loading !== undefined}
            onClick={() => void load("more", nextCursor)}
          >
            {loading === "more" ? "Loading…" : "Show more sessions"}
          </button>
        </div>
      )}
    </section>
  );
}

function SessionTable({
  slug,
  sessions,
  firstPrompts,
  filtered,
}: {
  slug: string;
  sessions: SessionView[];
  firstPrompts: Record<string, string>;
  filtered: boolean;
}) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(t);
  }, []);
  if (sessions.length === 0) {
    return (
      <div
        data-testid="session-list"
        className="rounded-md border border-dashed border-zinc-300 px-4 py-6 text-center text-sm text-zinc-500 dark:border-zinc-700"
      >
        {filtered
          ? "No session matches these filters."
          : "No sessions yet. A session is one Claude Code conversation in this workspace's directory."}
      </div>
    );
  }
  return (
    <div className="-mx-5 overflow-x-auto">
      <table data-testid="session-list" className="w-full text-sm">
        <thead className="text-left text-xs text-zinc-500">
          <tr>
            <th className="py-1 pl-5 font-medium">Session</th>
            <th className="font-medium">Status</th>
            <th className="font-medium">Started by</th>
            <th className="font-medium">Mode</th>
            <th className="pr-5 text-right font-medium">Cost</th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((s) => {
            const tokens = s.tokens.input + s.tokens.output + s.tokens.cacheRead + s.tokens.cacheWrite;
            return (
              <tr
                key={s.id}
                data-testid="session-row"
                data-status={s.status}
                data-session-id={s.id}
                data-archived={s.archivedAt ? "true" : "false"}
                className="border-t border-zinc-200 hover:bg-zinc-50 dark:border-zinc-800 dark:hover:bg-zinc-800/40"
              >
                <td className="py-2 pl-5">
                  <Link
                    data-testid="session-link"
                    href={`/w/${encodeURIComponent(slug)}/s/${encodeURIComponent(s.id)}`}
                    className="font-medium text-indigo-600 hover:underline dark:text-indigo-400"
                  >
                    {sessionTitle(s, firstPrompts[s.id])}
                  </Link>
                  {s.archivedAt && (
                    <span className="ml-2 rounded bg-zinc-100 px-1 text-[10px] text-zinc-500 dark:bg-zinc-800">
                      archived
                    </span>
                  )}
                  <div className="text-xs text-zinc-500" suppressHydrationWarning>
                    {formatRelative(s.createdAt, now)}
                    {s.model && <span className="ml-2 font-mono">{s.model}</span>}
                  </div>
                </td>
                <td>
                  <StatusBadge status={s.status} />
                </td>
                <td data-testid="session-row-creator">{s.createdBy.name}</td>
                <td className="text-xs" data-mode={s.mode}>
                  {modeLabel(s.mode)}
                </td>
                <td className="pr-5 text-right tabular-nums" title={`${formatCount(tokens)} tokens`}>
                  <span data-testid="session-row-cost">{formatUsd(s.costUsd)}</span>
                  {tokens > 0 && <div className="text-xs text-zinc-500">{formatTokens(tokens)} tok</div>}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function NewSession({
  slug,
  bypassAllowed,
  defaultMode,
  worktreeAvailable = false,
}: {
  slug: string;
  bypassAllowed: boolean;
  defaultMode: string;
  worktreeAvailable?: boolean;
}) {
  const router = useRouter();
  const { socket } = useSocket();
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();
  const [error, setError] = useState<string>();
  const modeRef = useRef<HTMLSelectElement>(null);
  const openerRef = useRef<HTMLButtonElement>(null);
  // One id per attempt to create, so a retried submit after a lost ack creates one session.
  const commandId = useRef<string>(undefined);
  const choices = modeChoices(bypassAllowed);
  const initialMode = choices.some((c) => c.value === defaultMode) ? defaultMode : "default";

  useEffect(() => {
    if (open) modeRef.current?.focus();
  }, [open]);

  function close() {
    setOpen(false);
    setError(undefined);
    openerRef.current?.focus();
  }

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!socket || busy) return;
    const form = new FormData(event.currentTarget);
    const model = String(form.get("model") ?? "").trim();
    const capText = String(form.get("maxBudgetUsd") ?? "").trim();
    const maxBudgetUsd = capText === "" ? undefined : Number(capText);
    if (maxBudgetUsd !== undefined && !(Number.isFinite(maxBudgetUsd) && maxBudgetUsd > 0)) {
      setError("The session cap must be a positive amount in USD, or empty for none.");
      return;
    }
    commandId.current ??= newCommandId();
    setBusy(true);
    setError(undefined);
    const ack = await emitCommand<SessionView>(socket, command.create, {
      workspace: slug,
      mode: String(form.get("mode") ?? "default") as PermissionModeChoice,
      model: model || undefined,
      maxBudgetUsd,
      ...(worktreeAvailable && form.get("worktree") === "on" ? { worktree: true } : {}),
      commandId: commandId.current,
    });
    setBusy(false);
    if (!ack.ok) {
      setError(ackMessage(ack));
      // A refusal is final; the next submit is a new request.
      if (ack.error.code !== "unavailable") commandId.current = undefined;
      return;
    }
    commandId.current = undefined;
    const id = ack.data?.id;
    if (!id) {
      setError("The session was created, but the server did not say which one. Reload the page.");
      return;
    }
    router.push(`/w/${encodeURIComponent(slug)}/s/${encodeURIComponent(id)}`);
  }

  function onKeyDown(event: KeyboardEvent<HTMLFormElement>) {
    if (event.key === "Escape") close();
  }

  if (!open) {
    return (
      <button
        ref={openerRef}
        type="button"
        data-testid="session-new"
        className="btn py-1.5"
        disabled={!hydrated}
        onClick={() => setOpen(true)}
        aria-expanded={false}
      >
        New session
      </button>
    );
  }
  return (
    <form
      onSubmit={onSubmit}
      onKeyDown={onKeyDown}
      aria-label="New session"
      className="flex flex-wrap items-end gap-3 rounded-md border border-zinc-200 bg-zinc-50 p-3 dark:border-zinc-800 dark:bg-zinc-950"
    >
      <label className="space-y-1 text-sm">
        <span className="block text-xs text-zinc-500">Permission mode</span>
        <select
          ref={modeRef}
          data-testid="session-new-mode"
          name="mode"
          defaultValue={initialMode}
          className="field w-auto py-1.5"
        >
          {choices.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      </label>
      <NewSessionModel slug={slug} />
      <label className="space-y-1 text-sm">
        <span className="block text-xs text-zinc-500">Session cap, USD (optional)</span>
        <input
          data-testid="session-new-max-budget"
          name="maxBudgetUsd"
          inputMode="decimal"
          placeholder="none"
          className="field w-28 py-1.5 font-mono"
        />
      </label>
      {worktreeAvailable && (
        <label className="flex items-center gap-2 self-center text-sm" title="A new branch conduit/<id> in .conduit/worktrees: the session's edits stay off the workspace's checkout until an owner merges them">
          <input type="checkbox" name="worktree" data-testid="session-new-worktree" />
          Own git worktree
        </label>
      )}
      <button data-testid="session-new-submit" type="submit" className="btn py-1.5" disabled={busy || !socket}>
        {busy ? "Starting…" : "Start session"}
      </button>
      <button type="button" className="btn-quiet py-1.5" onClick={close} disabled={busy}>
        Cancel
      </button>
      {error && (
        <p data-testid="session-new-error" role="alert" className="w-full text-sm text-red-600 dark:text-red-400">
          {error}
        </p>
      )}
    </form>
  );
}
