"use client";

/**
 * One changed file: its before → after as a Monaco diff (`change-diff`), the revert of the whole
 * file and of each hunk for owners and editors, and a review comment on a line that becomes the
 * session's next prompt.
 */
import dynamic from "next/dynamic";
import { useEffect, useState } from "react";
import { languageForPath } from "@/components/approval/apply-hunks";
import { DiffSkeleton } from "@/components/approval/diff-skeleton";
import { fetchFileChange, type ChangedFile, type ChangeScope, type FileChangeDiff, type FileSide } from "./changes-client";

const ReviewDiff = dynamic(() => import("@/components/approval/review-diff"), { ssr: false, loading: () => <DiffSkeleton height={200} /> });

export interface FileChangeViewProps {
  slug: string;
  sessionId: string;
  scope: ChangeScope;
  file: ChangedFile;
  canTakeBack: boolean;
  onRevertFile: () => Promise<string | undefined>;
  onRevertHunk: (hunk: number) => Promise<string | undefined>;
  onComment?: (text: string) => Promise<string | undefined>;
}

/** The review prompt a line comment sends. */
export function reviewPrompt(path: string, line: number, lineText: string | undefined, comment: string): string {
  const quoted = lineText === undefined ? "" : `\n> ${lineText}\n`;
  return `Review comment on ${path}, line ${line}:${quoted}\n${comment.trim()}`;
}

function textOf(side: FileSide): string | undefined {
  if (side.kind === "text") return side.content;
  if (side.kind === "absent") return "";
  return undefined;
}

function describe(side: FileSide): string {
  if (side.kind === "binary") return `binary, ${side.size} bytes`;
  if (side.kind === "too_large") return `${(side.size / 1024 / 1024).toFixed(1)} MB, too large to diff`;
  if (side.kind === "absent") return "absent";
  return "text";
}

export function FileChangeView({ slug, sessionId, scope, file, canTakeBack, onRevertFile, onRevertHunk, onComment }: FileChangeViewProps) {
  const [diff, setDiff] = useState<FileChangeDiff>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState<string>();
  const [actionError, setActionError] = useState<string>();

  useEffect(() => {
    let alive = true;
    fetchFileChange(slug, sessionId, scope, file.path).then(
      (d) => alive && setDiff(d),
      (err: unknown) => alive && setError(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      alive = false;
    };
    // the scope object is rebuilt each render: the parent keys this component by scope and path
  }, [slug, sessionId, file.path]);

  const run = async (label: string, action: () => Promise<string | undefined>) => {
    setBusy(label);
    setActionError(undefined);
    const failure = await action();
    setBusy(undefined);
    if (failure) setActionError(failure);
  };

  if (error)
    return (
      <p role="alert" className="px-3 py-2 text-xs text-red-700 dark:text-red-400">
        Could not load this file's change: {error}
      </p>
    );
  if (!diff) return <DiffSkeleton height={120} />;
  const before = textOf(diff.before);
  const after = textOf(diff.after);
  const diffable = before !== undefined && after !== undefined;
  const afterLines = after?.split("\n");

  return (
    <div className="space-y-2 border-t border-zinc-200 bg-zinc-50 px-3 py-2 dark:border-zinc-800 dark:bg-zinc-900/40">
      <div className="flex flex-wrap items-center gap-2 text-xs">
        <span className="text-zinc-500">
          before: {describe(diff.before)} · after: {describe(diff.after)}
        </span>
        {canTakeBack && (
          <button
            type="button"
            data-testid="change-revert-file"
            className="btn-quiet ml-auto py-1 text-xs"
            disabled={busy !== undefined}
            onClick={() => run("file", onRevertFile)}
          >
            {busy === "file" ? "Reverting…" : file.status === "added" ? "Revert (delete the file)" : "Revert this file"}
          </button>
        )}
      </div>
      {actionError && (
        <p role="alert" data-testid="change-error" className="rounded-md bg-red-50 px-2 py-1 text-xs text-red-800 dark:bg-red-950/50 dark:text-red-300">
          {actionError}
        </p>
      )}
      {diffable ? (
        <div data-testid="change-diff" data-path={diff.path} className="overflow-hidden rounded-md border border-zinc-200 dark:border-zinc-800">
          <ReviewDiff original={before} modified={after} language={languageForPath(diff.path)} readOnly height={200} maxHeight={600} collapseUnchanged />
        </div>
      ) : (
        <p data-testid="change-diff" data-path={diff.path} data-diffable="false" className="text-xs text-zinc-500">
          This file is binary or larger than 1 MB on one side: it is listed, not diffed.
        </p>
      )}
      {canTakeBack && diff.hunks.length > 0 && (
        <ul className="flex flex-wrap gap-2" aria-label="Hunks">
          {diff.hunks.map((h) => (
            <li key={h.index}>
              <button
                type="button"
                data-testid="change-revert-hunk"
                data-hunk={h.index}
                className="btn-quiet py-0.5 font-mono text-[11px]"
                disabled={busy !== undefined}
                title="Take back this hunk on the file as it is now"
                onClick={() => run(`hunk-${h.index}`, () => onRevertHunk(h.index))}
              >
                {busy === `hunk-${h.index}` ? "Reverting…" : `Revert @@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`}
              </button>
            </li>
          ))}
        </ul>
      )}
      {onComment && afterLines && diff.after.kind === "text" && <LineComment path={diff.path} lines={afterLines} onSend={onComment} />}
    </div>
  );
}

function LineComment({ path, lines, onSend }: { path: string; lines: string[]; onSend: (text: string) => Promise<string | undefined> }) {
  const [line, setLine] = useState(1);
  const [comment, setComment] = useState("");
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string }>();
  const max = Math.max(1, lines.length);
  const send = async () => {
    if (!comment.trim()) return;
    setBusy(true);
    setResult(undefined);
    const failure = await onSend(reviewPrompt(path, line, lines[line - 1], comment));
    setBusy(false);
    if (failure) setResult({ ok: false, text: failure });
    else {
      setResult({ ok: true, text: "Sent to the session as a prompt." });
      setComment("");
    }
  };
  return (
    <form
      className="flex flex-wrap items-center gap-2 text-xs"
      aria-label="Comment on a line"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <label htmlFor={`comment-line-${path}`} className="text-zinc-500">
        Comment on line
      </label>
      <input
        id={`comment-line-${path}`}
        data-testid="diff-comment-line"
        type="number"
        min={1}
        max={max}
        value={line}
        onChange={(e) => setLine(Math.min(max, Math.max(1, Number(e.target.value) || 1)))}
        className="field w-20 py-1 text-xs"
      />
      <input
        data-testid="diff-comment-input"
        aria-label="Your comment"
        placeholder="Change this…"
        value={comment}
        onChange={(e) => setComment(e.target.value)}
        className="field min-w-48 flex-1 py-1 text-xs"
      />
      <button type="submit" data-testid="diff-comment-send" className="btn-quiet py-1 text-xs" disabled={busy || !comment.trim()}>
        {busy ? "Sending…" : "Send as prompt"}
      </button>
      {result && (
        <span role={result.ok ? "status" : "alert"} className={result.ok ? "text-emerald-700 dark:text-emerald-400" : "text-red-700 dark:text-red-400"}>
          {result.text}
        </span>
      )}
    </form>
  );
}
