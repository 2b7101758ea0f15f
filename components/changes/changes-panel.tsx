"use client";

/**
 * The Changes tab: every file a session added, modified or deleted, per turn and for the whole
 * session (whatever tool did it), with +/- counts; a file opens as a Monaco diff of before →
 * after. Owners and editors revert a file or one hunk; anyone who may prompt can comment on a
 * line, which becomes a prompt quoting the file, the line and the comment. Viewers read.
 */
import { useCallback, useEffect, useState } from "react";
import type { Socket } from "socket.io-client";
import {
  changesCommand,
  fetchSessionChanges,
  sendChangesCommand,
  type ChangedFile,
  type ChangeScope,
  type SessionChanges,
  type TakeBackResult,
  type TurnChangeView,
} from "./changes-client";
import { FileChangeView } from "./file-change-view";

export interface ChangesPanelProps {
  slug: string;
  sessionId: string;
  socket: Socket | undefined;
  /** Changes when the log gains a changes, revert or rewind event: the panel reloads. */
  refreshKey: string;
  /** Sends a prompt to the session (review comments); answers an error message or undefined. */
  onPrompt?: (text: string) => Promise<string | undefined>;
  newCommandId: () => string;
  /** The history transcript: no take-backs, no comments. */
  readOnly?: boolean;
}

const sessionScopeValue = "session";

/**
 * A step's label in the scope list: turns by their number (a prompt's event number in the log
 * means nothing to people); a rewind names the turn it went back before, when it is listed.
 */
export function stepLabel(step: TurnChangeView, index: number, steps: readonly TurnChangeView[] = []): string {
  const when = new Date(step.createdAt).toLocaleTimeString();
  if (step.kind === "rewind") {
    const turns = steps.filter((t) => t.kind === "turn");
    const at = step.promptSeq === null ? -1 : turns.findIndex((t) => t.promptSeq === step.promptSeq);
    return `Rewind to before ${at >= 0 ? `turn ${at + 1}` : "an earlier prompt"} (${when})`;
  }
  if (step.kind === "revert") return `Revert (${when})`;
  return `Turn ${index + 1} (${when})`;
}

export function ChangesPanel({ slug, sessionId, socket, refreshKey, onPrompt, newCommandId, readOnly = false }: ChangesPanelProps) {
  const [changes, setChanges] = useState<SessionChanges>();
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(true);
  const [scopeValue, setScopeValue] = useState(sessionScopeValue);
  const [selected, setSelected] = useState<string>();
  const [reloads, setReloads] = useState(0);
  const [notice, setNotice] = useState<string>();

  useEffect(() => {
    let alive = true;
    setLoading(true);
    fetchSessionChanges(slug, sessionId).then(
      (data) => {
        if (!alive) return;
        setChanges(data);
        setError(undefined);
        setLoading(false);
      },
      (err: unknown) => {
        if (!alive) return;
        setError(err instanceof Error ? err.message : String(err));
        setLoading(false);
      },
    );
    return () => {
      alive = false;
    };
  }, [slug, sessionId, refreshKey, reloads]);

  const reload = useCallback(() => setReloads((n) => n + 1), []);
  const turnSteps = changes?.turns ?? [];
  const step = scopeValue === sessionScopeValue ? undefined : turnSteps.find((s) => s.id === scopeValue);
  const scope: ChangeScope = step ? { turn: step.id } : { session: true };
  const files: ChangedFile[] = step ? step.files : (changes?.session.files ?? []);
  const unknown = step ? step.status === "unknown" : changes?.session.status === "unknown";
  const canTakeBack = !readOnly && (changes?.canTakeBack ?? false);

  const takeBack = useCallback(
    async (name: (typeof changesCommand)[keyof typeof changesCommand], payload: Record<string, unknown>) => {
      const ack = await sendChangesCommand<TakeBackResult>(socket, name, { sessionId, commandId: newCommandId(), ...payload });
      if (!ack.ok) return ack.error.message;
      setNotice(`Reverted ${ack.data.changed.join(", ") || "nothing"}.`);
      reload();
      return undefined;
    },
    [socket, sessionId, newCommandId, reload],
  );

  return (
    <section data-testid="changes-panel" aria-label="Changes" className="space-y-3">
      <div className="flex flex-wrap items-center gap-2">
        <label htmlFor="change-scope" className="text-xs text-zinc-500">
          Show
        </label>
        <select
          id="change-scope"
          data-testid="change-scope"
          className="field w-auto py-1 text-xs"
          value={scopeValue}
          onChange={(e) => {
            setScopeValue(e.target.value);
            setSelected(undefined);
          }}
        >
          <option value={sessionScopeValue}>Whole session</option>
          {turnSteps.map((s, i) => (
            <option key={s.id} value={s.id}>
              {stepLabel(s, turnSteps.slice(0, i).filter((t) => t.kind === "turn").length, turnSteps)} — {s.status === "unknown" ? "unknown" : `${s.files.length} files`}
            </option>
          ))}
        </select>
        <button type="button" className="btn-quiet py-1 text-xs" onClick={reload}>
          Refresh
        </button>
        {!canTakeBack && !readOnly && changes && <span className="text-xs text-zinc-500">read-only: viewers cannot take changes back</span>}
        {notice && (
          <span role="status" data-testid="change-notice" className="text-xs text-emerald-700 dark:text-emerald-400">
            {notice}
          </span>
        )}
      </div>
      {error && (
        <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 dark:bg-red-950/50 dark:text-red-300">
          Could not load the changes: {error}{" "}
          <button type="button" className="font-medium underline" onClick={reload}>
            Retry
          </button>
        </p>
      )}
      {loading && !changes && <p className="text-sm text-zinc-500">Loading the changes…</p>}
      {changes && unknown && (
        <p data-testid="changes-unknown" className="rounded-md bg-amber-50 px-3 py-2 text-xs text-amber-900 dark:bg-amber-950/50 dark:text-amber-200">
          What changed here is unknown: a snapshot of the workspace failed or came too late.
        </p>
      )}
      {changes && !unknown && files.length === 0 && (
        <p className="text-sm text-zinc-500" data-testid="changes-empty">
          {turnSteps.length === 0 ? "No turn has finished yet: changes appear here after each turn." : "No files changed."}
        </p>
      )}
      {files.length > 0 && (
        <ul className="divide-y divide-zinc-200 rounded-md border border-zinc-200 text-sm dark:divide-zinc-800 dark:border-zinc-800" aria-label="Changed files">
          {files.map((f) => (
            <li key={f.path}>
              <button
                type="button"
                data-testid="change-file"
                data-path={f.path}
                data-status={f.status}
                aria-expanded={selected === f.path}
                className={`flex w-full items-center gap-2 px-3 py-1.5 text-left hover:bg-zinc-50 dark:hover:bg-zinc-800/50 ${selected === f.path ? "bg-indigo-50 dark:bg-indigo-950/30" : ""}`}
                onClick={() => setSelected((s) => (s === f.path ? undefined : f.path))}
              >
                <StatusLetter status={f.status} />
                <span className="min-w-0 flex-1 truncate font-mono text-xs">{f.path}</span>
                {f.binary && <span className="text-[11px] text-zinc-500">binary</span>}
                {f.large && <span className="text-[11px] text-zinc-500">over 1 MB</span>}
                <span className="text-xs text-emerald-700 tabular-nums dark:text-emerald-400" data-testid="change-insertions">
                  +{f.insertions}
                </span>
                <span className="text-xs text-red-700 tabular-nums dark:text-red-400" data-testid="change-deletions">
                  −{f.deletions}
                </span>
              </button>
              {selected === f.path && (
                <FileChangeView
                  key={`${scopeValue}:${f.path}:${reloads}:${refreshKey}`}
                  slug={slug}
                  sessionId={sessionId}
                  scope={scope}
                  file={f}
                  canTakeBack={canTakeBack}
                  onRevertFile={() => takeBack(changesCommand.revertFile, { scope, path: f.path })}
                  onRevertHunk={(hunk) => takeBack(changesCommand.revertHunk, { scope, path: f.path, hunk })}
                  onComment={readOnly ? undefined : onPrompt}
                />
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function StatusLetter({ status }: { status: ChangedFile["status"] }) {
  const tone =
    status === "added"
      ? "bg-emerald-100 text-emerald-800 dark:bg-emerald-900/50 dark:text-emerald-300"
      : status === "deleted"
        ? "bg-red-100 text-red-800 dark:bg-red-900/50 dark:text-red-300"
        : "bg-amber-100 text-amber-800 dark:bg-amber-900/50 dark:text-amber-300";
  return (
    <span title={status} className={`inline-flex size-5 shrink-0 items-center justify-center rounded text-[10px] font-bold ${tone}`}>
      {status[0]!.toUpperCase()}
      <span className="sr-only"> {status}</span>
    </span>
  );
}
