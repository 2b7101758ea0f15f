"use client";

import { useCallback, useEffect, useState } from "react";
import { gitApi, GitRequestError, type GitFileDiff, type WorktreeView } from "./git-api";
import { GitFileDiffView } from "./git-file-diff";

const pollMs = 4000;

/**
 * A session's own worktree: its branch, what the branch changed against its base (with a diff
 * per file), and for owners merge (or rebase) back and discard. Renders nothing for a session
 * without a worktree.
 */
export function WorktreePanel({ slug, sessionId, canMerge }: { slug: string; sessionId: string; canMerge: boolean }) {
  const [view, setView] = useState<WorktreeView | null>(null);
  const [error, setError] = useState<string>();
  const [conflicts, setConflicts] = useState<string[]>([]);
  const [done, setDone] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [strategy, setStrategy] = useState<"merge" | "rebase">("merge");
  const [diff, setDiff] = useState<GitFileDiff>();
  const [confirmDiscard, setConfirmDiscard] = useState(false);

  const refresh = useCallback(async () => {
    try {
      setView(await gitApi.worktree(slug, sessionId));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  }, [slug, sessionId]);

  useEffect(() => {
    void refresh();
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") void refresh();
    }, pollMs);
    return () => clearInterval(timer);
  }, [refresh]);

  if (!view) return null;

  async function act(run: () => Promise<string>) {
    setBusy(true);
    setError(undefined);
    setConflicts([]);
    setDone(undefined);
    try {
      setDone(await run());
      await refresh();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      if (err instanceof GitRequestError) setConflicts(err.conflicts);
    } finally {
      setBusy(false);
    }
  }

  const closed = view.closedAt !== null;
  return (
    <section className="card space-y-3" aria-labelledby="worktree-heading" data-testid="worktree-panel">
      <div className="flex flex-wrap items-baseline gap-3">
        <h2 id="worktree-heading" className="text-sm font-medium text-zinc-500">
          Session worktree
        </h2>
        <span className="text-sm">
          <span data-testid="worktree-branch" className="font-mono font-medium">
            {view.branch}
          </span>{" "}
          from <span className="font-mono">{view.baseBranch}</span>
        </span>
        {closed && <span className="text-xs text-zinc-500">discarded</span>}
      </div>
      {!closed && (
        <ul className="divide-y divide-zinc-100 text-sm dark:divide-zinc-800" aria-label="Changes on the session's branch">
          {view.changes.length === 0 && <li className="py-1 text-xs text-zinc-500">No changes against {view.baseBranch} yet.</li>}
          {view.changes.map((c) => (
            <li key={c.path} data-testid="worktree-change" data-path={c.path} data-status={c.status} className="flex items-center gap-2 py-1">
              <button
                type="button"
                className="truncate text-left font-mono hover:underline"
                onClick={() => void gitApi.worktreeDiff(slug, sessionId, c.path).then(setDiff, (err: unknown) => setError(err instanceof Error ? err.message : String(err)))}
              >
                {c.path}
              </button>
              <span className="text-xs text-zinc-500">{c.status}</span>
            </li>
          ))}
        </ul>
      )}
      {diff && !closed && <GitFileDiffView diff={diff} testId="worktree-diff" />}
      {canMerge && !closed && (
        <div className="flex flex-wrap items-center gap-3">
          <label className="flex items-center gap-2 text-sm">
            <span className="text-xs text-zinc-500">Bring back by</span>
            <select data-testid="worktree-strategy" className="field w-auto py-1" value={strategy} onChange={(e) => setStrategy(e.target.value as "merge" | "rebase")}>
              <option value="merge">merge commit</option>
              <option value="rebase">rebase, then fast-forward</option>
            </select>
          </label>
          <button
            type="button"
            data-testid="worktree-merge"
            className="btn py-1.5"
            disabled={busy}
            onClick={() =>
              void act(async () => {
                const merged = await gitApi.merge(slug, sessionId, strategy);
                return `${view.branch} is in ${view.baseBranch} (${merged.commit.slice(0, 7)}).`;
              })
            }
          >
            {busy ? "Working…" : `Merge into ${view.baseBranch}`}
          </button>
          {confirmDiscard ? (
            <span className="flex items-center gap-2 text-xs" role="group" aria-label="Discard the worktree?">
              Delete the worktree and branch {view.branch}, with every change on it?
              <button
                type="button"
                data-testid="worktree-discard-confirm"
                className="btn py-0.5 text-xs"
                disabled={busy}
                onClick={() =>
                  void act(async () => {
                    await gitApi.discardWorktree(slug, sessionId);
                    setConfirmDiscard(false);
                    return `The worktree and ${view.branch} are gone.`;
                  })
                }
              >
                Delete
              </button>
              <button type="button" className="btn-quiet py-0.5 text-xs" onClick={() => setConfirmDiscard(false)}>
                Cancel
              </button>
            </span>
          ) : (
            <button type="button" data-testid="worktree-discard" className="btn-quiet py-1.5" disabled={busy} onClick={() => setConfirmDiscard(true)}>
              Discard worktree
            </button>
          )}
        </div>
      )}
      {error && (
        <div role="alert" data-testid="worktree-error" className="space-y-1 text-sm text-red-600">
          <p>{error}</p>
          {conflicts.length > 0 && (
            <ul data-testid="worktree-conflicts" className="list-inside list-disc font-mono text-xs">
              {conflicts.map((c) => (
                <li key={c}>{c}</li>
              ))}
            </ul>
          )}
        </div>
      )}
      {done && (
        <p role="status" data-testid="worktree-done" className="text-sm text-green-700 dark:text-green-400">
          {done}
        </p>
      )}
    </section>
  );
}
