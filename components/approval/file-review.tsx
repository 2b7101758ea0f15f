"use client";

import dynamic from "next/dynamic";
import { useMemo, useRef, useState } from "react";
import type { FileReview, WireHunk } from "@/server/shared/wire/approval";
import { applyHunks, HunkMismatchError, toggleHunk } from "./apply-hunks";
import { PlainDiff } from "./plain-diff";
import { useAfterPaint } from "./use-after-paint";
import { isReviewEditable, reviewBadge, reviewLanguage, reviewTitle } from "./file-review-display";
import type { ReviewDiffHandle } from "./review-diff";

// While the chunk loads, the wrapper below keeps the diff's height: a skeleton of another height
// here moved the card's buttons under the pointer as the editor arrived.
const ReviewDiff = dynamic(() => import("./review-diff"), { ssr: false, loading: () => null });

const lineHeight = 18;
const collapseAbove = 80;
const maxEditorHeight = 480;

function lineCount(text: string): number {
  return text === "" ? 1 : text.split("\n").length;
}

/** A first guess (no wrapping) so the page does not jump much when Monaco measures. */
function editorHeight(original: string, proposed: string, collapsed: boolean): number {
  if (collapsed) return 360;
  const lines = Math.max(lineCount(original), lineCount(proposed));
  return Math.min(lines * lineHeight + 10, maxEditorHeight);
}

export interface FileReviewPanelProps {
  review: FileReview;
  /** Decided approvals: no editing, no hunk controls. */
  readOnly?: boolean;
  /** Shown on the right instead of the proposal (the approved version of a decided card). */
  shownText?: string;
  /** The right side's text after every change (hunk toggles and typing). */
  onTextChange?: (text: string) => void;
  /** The workspace's directory: the file's path is shown relative to it (in full on hover). */
  root?: string;
}

/**
 * The file on disk (for NotebookEdit: the cell) against the proposal, right side editable, with
 * one Accept/Reject pair per hunk. A toggle swaps just that hunk in the current text so hand
 * edits elsewhere survive; when the approver edited inside the hunk itself, the text is rebuilt
 * from the original. A deleted notebook cell is shown read-only: it can only be allowed or denied.
 */
export function FileReviewPanel({
  review,
  readOnly: decided = false,
  shownText,
  onTextChange,
  root,
}: FileReviewPanelProps) {
  const readOnly = decided || !isReviewEditable(review);
  const original = review.original ?? "";
  const [accepted, setAccepted] = useState<ReadonlySet<string>>(() => new Set(review.hunks.map((h) => h.id)));
  const [note, setNote] = useState<string>();
  const [edited, setEdited] = useState(false);
  const handle = useRef<ReviewDiffHandle | null>(null);
  const text = useRef(shownText ?? review.proposed);
  // The text the accepted hunks produce without hand edits: tells a hand edit from a toggle.
  const expected = useRef(review.proposed);
  const collapsed = Math.max(lineCount(original), lineCount(review.proposed)) > collapseAbove;
  const height = useMemo(
    () => editorHeight(original, shownText ?? review.proposed, collapsed),
    [original, shownText, review.proposed, collapsed],
  );
  const language = reviewLanguage(review);
  const title = reviewTitle(review, root);
  const badge = reviewBadge(review);
  const stats = useMemo(() => countChanges(review.hunks), [review.hunks]);
  // The card around the diff paints first; Monaco's editor (tens of ms to create) mounts after.
  const painted = useAfterPaint();
  // Until Monaco shows its computed diff (seconds on a page's first one), the changes are drawn
  // as plain lines over its place: what Allow would write is never hidden behind "Loading".
  const [editorShown, setEditorShown] = useState(false);

  const rebuild = (set: ReadonlySet<string>): string | undefined => {
    if (set.size === review.hunks.length) return review.proposed;
    if (set.size === 0) return original;
    try {
      return applyHunks(original, review.hunks, set);
    } catch (err) {
      if (err instanceof HunkMismatchError) return undefined;
      throw err;
    }
  };

  const setHunk = (hunk: WireHunk, accept: boolean) => {
    if (accepted.has(hunk.id) === accept) return;
    const next = new Set(accepted);
    if (accept) next.add(hunk.id);
    else next.delete(hunk.id);
    const rebuilt = rebuild(next);
    if (rebuilt === undefined) {
      setNote("This change cannot be applied on its own. Edit the right side instead.");
      return;
    }
    const current = handle.current?.getModified() ?? text.current;
    const handEdited = current !== expected.current;
    let result = handEdited ? toggleHunk(current, original, review.hunks, accepted, hunk.id, accept) : rebuilt;
    if (result === undefined) {
      result = rebuilt;
      setNote(
        "You had edited inside that change, so the right side was rebuilt from the original with the accepted changes.",
      );
    } else {
      setNote(undefined);
    }
    expected.current = rebuilt;
    setAccepted(next);
    if (handle.current) handle.current.setModified(result);
    else {
      text.current = result;
      onTextChange?.(result);
    }
    setEdited(result !== rebuilt);
    handle.current?.revealLine(Math.max(1, hunk.newStart));
  };

  const onChange = (value: string) => {
    text.current = value;
    setEdited(value !== expected.current);
    onTextChange?.(value);
  };

  return (
    <div className="overflow-hidden rounded-md border border-zinc-200 dark:border-zinc-800">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1 border-b border-zinc-200 bg-zinc-50 px-2.5 py-1.5 text-xs dark:border-zinc-800 dark:bg-zinc-950">
        <span className="min-w-0 truncate font-mono font-medium" title={reviewTitle(review)}>
          {title}
        </span>
        {badge && (
          <span
            data-testid="approval-diff-badge"
            className={`rounded px-1 text-[10px] font-medium ${
              badge === "deleted cell"
                ? "bg-red-100 text-red-800 dark:bg-red-950 dark:text-red-300"
                : "bg-emerald-100 text-emerald-800 dark:bg-emerald-950 dark:text-emerald-300"
            }`}
          >
            {badge}
          </span>
        )}
        {shownText === undefined && (
          <span className="font-mono text-[11px]">
            <span className="text-emerald-700 dark:text-emerald-400">+{stats.added}</span>{" "}
            <span className="text-red-700 dark:text-red-400">−{stats.removed}</span>
          </span>
        )}
        {!readOnly && edited && (
          <span
            data-testid="approval-diff-edited"
            className="rounded bg-indigo-100 px-1 text-[10px] font-medium text-indigo-800 dark:bg-indigo-950 dark:text-indigo-300"
          >
            edited by you
          </span>
        )}
        <span className="ml-auto text-[11px] text-zinc-500">
          {decided
            ? "read-only"
            : readOnly
              ? "The whole cell is deleted: allow or deny."
              : "Right side is editable: what you see there is what gets written."}
        </span>
      </div>
      {review.problem && (
        <div
          role="note"
          data-testid="approval-review-problem"
          className="border-b border-amber-200 bg-amber-50 px-2.5 py-1.5 text-xs text-amber-900 dark:border-amber-900 dark:bg-amber-950/60 dark:text-amber-200"
        >
          {review.problem}
        </div>
      )}
      <div
        data-testid="approval-diff"
        data-language={language}
        data-readonly={readOnly}
        data-editor={editorShown ? "shown" : "loading"}
        className="relative"
        style={{ minHeight: height }}
      >
        {painted && (
          <ReviewDiff
            original={original}
            modified={shownText ?? review.proposed}
            language={language}
            readOnly={readOnly}
            height={height}
            maxHeight={maxEditorHeight}
            collapseUnchanged={collapsed}
            onChange={readOnly ? undefined : onChange}
            onReady={(h) => {
              handle.current = h;
              // A toggle made before the editor loaded is already in `text`.
              if (h && text.current !== h.getModified()) h.setModified(text.current);
            }}
            onDiffShown={() => setEditorShown(true)}
            loading={<div style={{ height }} />}
          />
        )}
        {!editorShown && (
          <div className="absolute inset-0 z-10" style={{ minHeight: height }}>
            <PlainDiff
              hunks={shownText === undefined ? review.hunks : []}
              rejected={accepted.size === review.hunks.length ? undefined : rejectedIds(review.hunks, accepted)}
              fallbackText={shownText ?? review.proposed}
              loading
            />
          </div>
        )}
      </div>
      {!readOnly && review.hunks.length > 0 && (
        <ol className="divide-y divide-zinc-100 border-t border-zinc-200 dark:divide-zinc-800/70 dark:border-zinc-800">
          {review.hunks.map((hunk, n) => (
            <HunkRow
              key={hunk.id}
              index={n}
              hunk={hunk}
              accepted={accepted.has(hunk.id)}
              onSet={(accept) => setHunk(hunk, accept)}
              onShow={() => handle.current?.revealLine(Math.max(1, hunk.newStart))}
            />
          ))}
        </ol>
      )}
      {note && (
        <p
          role="status"
          className="border-t border-zinc-200 px-2.5 py-1.5 text-xs text-zinc-600 dark:border-zinc-800 dark:text-zinc-400"
        >
          {note}
        </p>
      )}
    </div>
  );
}

function rejectedIds(hunks: readonly WireHunk[], accepted: ReadonlySet<string>): ReadonlySet<string> {
  return new Set(hunks.filter((h) => !accepted.has(h.id)).map((h) => h.id));
}

function countChanges(hunks: readonly WireHunk[]): { added: number; removed: number } {
  return hunks.reduce((acc, h) => ({ added: acc.added + h.added.length, removed: acc.removed + h.removed.length }), {
    added: 0,
    removed: 0,
  });
}

function hunkRange(hunk: WireHunk): string {
  if (hunk.oldLines === 0) return `after line ${Math.max(0, hunk.newStart - 1)}`;
  return hunk.oldLines === 1 ? `line ${hunk.oldStart}` : `lines ${hunk.oldStart}–${hunk.oldStart + hunk.oldLines - 1}`;
}

function hunkPreview(hunk: WireHunk): string {
  const line = hunk.added.find((l) => l.trim() !== "") ?? hunk.removed.find((l) => l.trim() !== "") ?? "";
  return line.trim().slice(0, 120);
}

function HunkRow({
  index,
  hunk,
  accepted,
  onSet,
  onShow,
}: {
  index: number;
  hunk: WireHunk;
  accepted: boolean;
  onSet: (accept: boolean) => void;
  onShow: () => void;
}) {
  const segment =
    "px-2 py-0.5 text-[11px] font-medium focus-visible:z-10 focus-visible:outline-2 focus-visible:outline-indigo-500";
  return (
    <li
      data-testid="approval-hunk"
      data-hunk-id={hunk.id}
      data-state={accepted ? "accepted" : "rejected"}
      className={`flex items-center gap-2 px-2.5 py-1 text-xs ${accepted ? "" : "bg-zinc-50 dark:bg-zinc-950/60"}`}
    >
      <button
        type="button"
        onClick={onShow}
        className="shrink-0 font-mono text-[11px] text-zinc-500 hover:text-indigo-600 hover:underline dark:hover:text-indigo-400"
        title="Show in the editor"
      >
        #{index + 1} · {hunkRange(hunk)}
      </button>
      <span className="shrink-0 font-mono text-[11px]">
        <span className="text-emerald-700 dark:text-emerald-400">+{hunk.added.length}</span>{" "}
        <span className="text-red-700 dark:text-red-400">−{hunk.removed.length}</span>
      </span>
      <span
        className={`min-w-0 flex-1 truncate font-mono text-[11px] ${accepted ? "text-zinc-700 dark:text-zinc-300" : "text-zinc-400 line-through"}`}
      >
        {hunkPreview(hunk)}
      </span>
      <span
        className="inline-flex shrink-0 overflow-hidden rounded border border-zinc-300 dark:border-zinc-700"
        role="group"
        aria-label={`Change ${index + 1}`}
      >
        <button
          type="button"
          data-testid="hunk-accept"
          aria-pressed={accepted}
          onClick={() => onSet(true)}
          className={`${segment} ${accepted ? "bg-emerald-600 text-white" : "text-zinc-600 hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800"}`}
        >
          Accept
        </button>
        <button
          type="button"
          data-testid="hunk-reject"
          aria-pressed={!accepted}
          onClick={() => onSet(false)}
          className={`${segment} border-l border-zinc-300 dark:border-zinc-700 ${!accepted ? "bg-zinc-700 text-white dark:bg-zinc-600" : "text-zinc-600 hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800"}`}
        >
          Reject
        </button>
      </span>
    </li>
  );
}
