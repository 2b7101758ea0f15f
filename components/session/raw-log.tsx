"use client";

import { useMemo, useState } from "react";
import type { WireEvent } from "@/server/shared/wire/session";

const pageSize = 500;

/** One event as an NDJSON line (the shape the sidecar sent, payload included). */
export function eventLine(event: WireEvent): string {
  return JSON.stringify(event);
}

/** The session's events as NDJSON lines, newest last, for debugging. */
export function RawLog({ events, downloadHref }: { events: readonly WireEvent[]; downloadHref: string }) {
  const [filter, setFilter] = useState("");
  const [limit, setLimit] = useState(pageSize);
  const [expanded, setExpanded] = useState<ReadonlySet<number>>(new Set());
  const toggle = (seq: number) =>
    setExpanded((current) => {
      const next = new Set(current);
      if (!next.delete(seq)) next.add(seq);
      return next;
    });
  const lines = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    const all = events.map((e) => ({ seq: e.seq, kind: e.kind, trimmed: e.trimmed, text: eventLine(e) }));
    return needle ? all.filter((l) => l.text.toLowerCase().includes(needle)) : all;
  }, [events, filter]);
  const shown = lines.slice(Math.max(0, lines.length - limit));

  return (
    <div className="space-y-2">
      <div className="flex flex-wrap items-center gap-2 text-xs">
        <label className="flex items-center gap-1.5">
          <span className="text-zinc-500">Filter</span>
          <input
            value={filter}
            onChange={(e) => setFilter(e.target.value)}
            placeholder="e.g. tool_use"
            className="field w-56 py-1 font-mono text-xs"
          />
        </label>
        <span className="text-zinc-500">
          {lines.length} of {events.length} events
        </span>
        <a href={downloadHref} className="ml-auto text-indigo-600 hover:underline dark:text-indigo-400" download>
          Download the whole log (NDJSON)
        </a>
      </div>
      {lines.length > shown.length && (
        <button
          type="button"
          className="text-xs text-indigo-600 hover:underline dark:text-indigo-400"
          onClick={() => setLimit((l) => l + pageSize)}
        >
          Show {Math.min(pageSize, lines.length - shown.length)} earlier lines
        </button>
      )}
      <ol
        data-testid="raw-log"
        className="max-h-[65vh] overflow-auto rounded-md border border-zinc-200 bg-white font-mono text-[11.5px] leading-5 dark:border-zinc-800 dark:bg-zinc-950"
        aria-label="Raw events"
      >
        {shown.map((l) => (
          <li
            key={l.seq}
            data-testid="raw-line"
            data-seq={l.seq}
            className="flex gap-2 border-b border-zinc-100 px-2 py-0.5 hover:bg-zinc-50 dark:border-zinc-900 dark:hover:bg-zinc-900"
          >
            <button
              type="button"
              aria-expanded={expanded.has(l.seq)}
              aria-label={`${expanded.has(l.seq) ? "Collapse" : "Expand"} event ${l.seq}`}
              onClick={() => toggle(l.seq)}
              className="w-12 shrink-0 text-right text-zinc-400 select-none hover:text-indigo-600 focus-visible:outline-2 focus-visible:outline-indigo-500"
            >
              {expanded.has(l.seq) ? "▾" : "▸"} {l.seq}
            </button>
            <span className="w-16 shrink-0 truncate text-zinc-500 select-none">{l.kind}</span>
            <span
              className={`min-w-0 flex-1 break-all whitespace-pre-wrap ${expanded.has(l.seq) ? "" : "line-clamp-2"}`}
            >
              {l.text}
            </span>
            {l.trimmed && <span className="shrink-0 text-amber-600">trimmed</span>}
          </li>
        ))}
        {shown.length === 0 && <li className="px-2 py-4 text-center text-zinc-500">No events.</li>}
      </ol>
    </div>
  );
}
