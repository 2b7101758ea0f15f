import type { WireHunk } from "@/server/shared/wire/approval";
import { plainDiffRows, type PlainDiffRow } from "./plain-diff-rows";

export interface PlainDiffProps {
  hunks: readonly WireHunk[];
  /** Shown as it is when there are no hunks to draw (a review with a problem, an unchanged file). */
  fallbackText: string;
  /** Hunks the approver rejected: drawn struck through (they will not be written). */
  rejected?: ReadonlySet<string>;
  /** Says that the editor is on its way, for screen readers. */
  loading?: boolean;
}

const rowTone: Record<PlainDiffRow["kind"], string> = {
  header: "bg-zinc-100 text-zinc-500 dark:bg-zinc-900 dark:text-zinc-400",
  removed: "bg-red-50 text-red-900 dark:bg-red-950/50 dark:text-red-200",
  added: "bg-emerald-50 text-emerald-900 dark:bg-emerald-950/50 dark:text-emerald-200",
  text: "text-zinc-800 dark:text-zinc-200",
  more: "text-zinc-500 italic",
};

const marker: Record<PlainDiffRow["kind"], string> = { header: "", removed: "−", added: "+", text: " ", more: "" };

/**
 * The review's changes as plain lines (removed, then added, per hunk), drawn with the card: what
 * is about to be allowed is readable at once, while Monaco's editor loads and computes its diff.
 * The editor replaces it as soon as its diff is shown.
 */
export function PlainDiff({ hunks, fallbackText, rejected, loading = false }: PlainDiffProps) {
  const rows = plainDiffRows(hunks, fallbackText);
  return (
    <div
      data-testid="approval-diff-plain"
      aria-busy={loading || undefined}
      className="h-full overflow-auto bg-white font-mono text-xs leading-[18px] dark:bg-zinc-950"
    >
      {loading && <span className="sr-only">The changes as plain lines; the editor is loading.</span>}
      <table className="w-full border-collapse">
        <tbody>
          {rows.map((row, n) => (
            <tr
              key={n}
              className={`${rowTone[row.kind]} ${row.hunk && rejected?.has(row.hunk) ? "line-through opacity-50" : ""}`}
              data-kind={row.kind}
            >
              <td className="w-10 pr-2 text-right align-top text-zinc-400 select-none tabular-nums">{row.line ?? ""}</td>
              <td aria-hidden className="w-3 align-top select-none">
                {marker[row.kind]}
              </td>
              <td className="pr-2 break-all whitespace-pre-wrap">
                {row.kind === "removed" && <span className="sr-only">removed: </span>}
                {row.kind === "added" && <span className="sr-only">added: </span>}
                {row.text === "" ? "\u00a0" : row.text}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
