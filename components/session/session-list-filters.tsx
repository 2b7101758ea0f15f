"use client";

export interface SessionFilters {
  status: string;
  archived: "active" | "archived" | "all";
  creator: string;
  q: string;
}

export const emptyFilters: SessionFilters = { status: "", archived: "active", creator: "", q: "" };

export function isDefaultFilters(f: SessionFilters): boolean {
  return f.status === "" && f.archived === "active" && f.creator === "" && f.q.trim() === "";
}

/** The filters as the session list route's query (`server/web/session-list-query.ts`). */
export function filtersQuery(f: SessionFilters): URLSearchParams {
  const params = new URLSearchParams();
  if (f.status) params.set("status", f.status);
  if (f.archived !== "active") params.set("archived", f.archived);
  if (f.creator) params.set("creator", f.creator);
  if (f.q.trim()) params.set("q", f.q.trim());
  return params;
}

const statusChoices = ["live", "ended", "idle", "running", "awaiting-approval", "stopped", "crashed"] as const;

/** Status, archived, creator and text filters over the workspace's sessions. */
export function SessionListFilters({
  filters,
  members,
  onChange,
  busy,
}: {
  filters: SessionFilters;
  members: readonly { userId: string; name: string }[];
  onChange: (next: SessionFilters) => void;
  busy: boolean;
}) {
  return (
    <div role="search" aria-label="Filter sessions" aria-busy={busy} className="flex flex-wrap items-end gap-2 text-xs">
      <label className="space-y-0.5">
        <span className="block text-zinc-500">Search</span>
        <input
          type="search"
          data-testid="session-filter-text"
          value={filters.q}
          maxLength={200}
          placeholder="Title, prompt or reply"
          onChange={(e) => onChange({ ...filters, q: e.target.value })}
          className="field w-56 py-1 text-xs"
        />
      </label>
      <label className="space-y-0.5">
        <span className="block text-zinc-500">Status</span>
        <select
          data-testid="session-filter-status"
          value={filters.status}
          onChange={(e) => onChange({ ...filters, status: e.target.value })}
          className="field w-auto py-1 pr-7 text-xs"
        >
          <option value="">Any</option>
          {statusChoices.map((s) => (
            <option key={s} value={s}>
              {s === "live" ? "Live (any)" : s === "ended" ? "Ended (any)" : s.replace("-", " ")}
            </option>
          ))}
        </select>
      </label>
      <label className="space-y-0.5">
        <span className="block text-zinc-500">Started by</span>
        <select
          data-testid="session-filter-creator"
          value={filters.creator}
          onChange={(e) => onChange({ ...filters, creator: e.target.value })}
          className="field w-auto py-1 pr-7 text-xs"
        >
          <option value="">Anyone</option>
          {members.map((m) => (
            <option key={m.userId} value={m.userId}>
              {m.name}
            </option>
          ))}
        </select>
      </label>
      <label className="space-y-0.5">
        <span className="block text-zinc-500">Archived</span>
        <select
          data-testid="session-filter-archived"
          value={filters.archived}
          onChange={(e) => onChange({ ...filters, archived: e.target.value as SessionFilters["archived"] })}
          className="field w-auto py-1 pr-7 text-xs"
        >
          <option value="active">Hide archived</option>
          <option value="archived">Only archived</option>
          <option value="all">Show all</option>
        </select>
      </label>
      {busy && (
        <span role="status" className="pb-1 text-zinc-500">
          Loading…
        </span>
      )}
    </div>
  );
}
