"use client";

import { diffStats, maxDiffRows, type DiffRow } from "./diff-data";

const rowTone = {
  add: "bg-emerald-50 text-emerald-900 dark:bg-emerald-950/40 dark:text-emerald-200",
  del: "bg-red-50 text-red-900 dark:bg-red-950/40 dark:text-red-200",
  context: "text-zinc-700 dark:text-zinc-300",
  gap: "bg-zinc-50 text-zinc-400 italic dark:bg-zinc-900",
} as const;

const markTone = {
  add: "rounded-[2px] bg-emerald-200 text-inherit dark:bg-emerald-800/80",
  del: "rounded-[2px] bg-red-200 text-inherit line-through decoration-red-400/60 dark:bg-red-800/80",
} as const;

/** `+3 −1`, the size of a change at a glance. */
export function DiffStatsBadge({ rows }: { rows: readonly DiffRow[] }) {
  const { added, removed } = diffStats(rows);
  return (
    <span data-testid="diff-stats" className="font-mono text-[11px] tabular-nums">
      <span className="text-emerald-700 dark:text-emerald-400">+{added}</span>{" "}
      <span className="text-red-700 dark:text-red-400">−{removed}</span>
    </span>
  );
}

/** A line diff; the words that changed inside a paired line are marked (`diff-word`). */
export function DiffView({ rows }: { rows: readonly DiffRow[] }) {
  if (rows.length === 0) return <p className="text-xs text-zinc-500 italic">No change to the file&apos;s text.</p>;
  return (
    <div
      data-testid="tool-diff"
      role="table"
      aria-label="Changes"
      className="max-h-96 overflow-auto rounded border border-zinc-200 font-mono text-xs dark:border-zinc-800"
    >
      {rows.map((row, n) => (
        <div
          key={n}
          role="row"
          data-testid="diff-row"
          data-type={row.type}
          className={`flex min-w-max ${rowTone[row.type]}`}
        >
          {row.type === "gap" ? (
            <span className="px-2 py-0.5">⋯ {row.text}</span>
          ) : (
            <>
              <span aria-hidden className="w-9 shrink-0 pr-1 text-right text-zinc-400 select-none">
                {row.type === "add" ? "" : row.oldLine}
              </span>
              <span aria-hidden className="w-9 shrink-0 pr-1 text-right text-zinc-400 select-none">
                {row.type === "del" ? "" : row.newLine}
              </span>
              <span className="w-4 shrink-0 text-center select-none">
                <span aria-hidden>{row.type === "add" ? "+" : row.type === "del" ? "-" : " "}</span>
                <span className="sr-only">{row.type === "add" ? "added" : row.type === "del" ? "removed" : ""}</span>
              </span>
              <span className="pr-3 whitespace-pre">
                {row.segments && (row.type === "add" || row.type === "del")
                  ? row.segments.map((s, k) =>
                      s.changed ? (
                        <mark
                          key={k}
                          data-testid="diff-word"
                          data-side={row.type}
                          className={markTone[row.type === "add" ? "add" : "del"]}
                        >
                          {s.text}
                        </mark>
                      ) : (
                        <span key={k}>{s.text}</span>
                      ),
                    )
                  : row.text || " "}
              </span>
            </>
          )}
        </div>
      ))}
      {rows.length >= maxDiffRows && (
        <div className="px-2 py-1 text-zinc-500 italic">Cut at {maxDiffRows} lines; open the file to see the rest.</div>
      )}
    </div>
  );
}
