"use client";

import { useCallback, useEffect, useRef, useState, type FormEvent } from "react";
import { gitApi, type GitFileDiff, type GitFileStatus, type GitStatus } from "./git-api";
import { GitFileDiffView } from "./git-file-diff";

/** How often the status is read again while the tab is visible. */
const pollMs = 4000;

type Repo = Extract<GitStatus, { repository: true }>;

/** The one word for a path's state (its index change first). */
function statusOf(file: GitFileStatus): string {
  if (file.untracked) return "untracked";
  return file.staged ?? file.unstaged ?? "modified";
}

/** Discarding removes the file (HEAD does not have it) rather than restoring it. */
function discardDeletes(file: GitFileStatus): boolean {
  return file.untracked || file.staged === "added" || file.staged === "renamed" || file.staged === "copied";
}

/**
 * The workspace's repository: branch, changed files with a diff against HEAD, commit of the
 * selected files (editors and owners), discard of one file's change (confirmed). Renders
 * nothing at all when the workspace is not a repository.
 */
export function GitPanel({ slug, canWrite }: { slug: string; canWrite: boolean }) {
  const [status, setStatus] = useState<Repo>();
  const [loadError, setLoadError] = useState<string>();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<string>();
  const [done, setDone] = useState<string>();
  const [diff, setDiff] = useState<GitFileDiff>();
  const [diffError, setDiffError] = useState<string>();
  const [confirming, setConfirming] = useState<GitFileStatus>();
  const alive = useRef(true);

  const refresh = useCallback(async () => {
    try {
      const next = await gitApi.status(slug);
      if (!alive.current) return;
      setLoadError(undefined);
      if (!next.repository) {
        setStatus(undefined);
        return;
      }
      setStatus(next);
      // a selection only of paths that are still changed
      const changed = new Set(next.files.map((f) => f.path));
      setSelected((prev) => (Array.from(prev).every((p) => changed.has(p)) ? prev : new Set(Array.from(prev).filter((p) => changed.has(p)))));
    } catch (err) {
      if (alive.current) setLoadError(err instanceof Error ? err.message : String(err));
    }
  }, [slug]);

  useEffect(() => {
    alive.current = true;
    void refresh();
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") void refresh();
    }, pollMs);
    return () => {
      alive.current = false;
      clearInterval(timer);
    };
  }, [refresh]);

  // not a repository, or not known yet: nothing of git shows
  if (!status) return null;

  async function openDiff(file: GitFileStatus) {
    setDiffError(undefined);
    try {
      setDiff(await gitApi.diff(slug, file.path, file.origPath));
    } catch (err) {
      setDiff(undefined);
      setDiffError(err instanceof Error ? err.message : String(err));
    }
  }

  function toggle(path: string) {
    setSelected((prev) => {
      const next = new Set(prev);
      if (next.has(path)) next.delete(path);
      else next.add(path);
      return next;
    });
  }

  async function onCommit(event: FormEvent) {
    event.preventDefault();
    if (busy || !status) return;
    setActionError(undefined);
    setDone(undefined);
    if (message.trim() === "") {
      setActionError("Write a commit message first.");
      return;
    }
    const files = status.files.filter((f) => selected.has(f.path));
    if (files.length === 0) {
      setActionError("Select at least one changed file.");
      return;
    }
    setBusy(true);
    try {
      const paths = files.flatMap((f) => (f.origPath ? [f.path, f.origPath] : [f.path]));
      const made = await gitApi.commit(slug, paths, message);
      setDone(`Committed ${made.commit.slice(0, 7)}${made.branch ? ` on ${made.branch}` : ""}.`);
      setMessage("");
      setSelected(new Set());
      setDiff(undefined);
      await refresh();
    } catch (err) {
      setActionError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  async function onDiscard(file: GitFileStatus) {
    setBusy(true);
    setActionError(undefined);
    setDone(undefined);
    try {
      const result = await gitApi.discard(slug, file.path, discardDeletes(file));
      setDone(result.action === "deleted" ? `Deleted ${result.path}.` : `Restored ${result.path} from the last commit.`);
      setConfirming(undefined);
      if (diff?.path === file.path) setDiff(undefined);
      await refresh();
    } catch (err) {
      setActionError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  const allSelected = status.files.length > 0 && status.files.every((f) => selected.has(f.path));

  return (
    <section className="card space-y-3" aria-labelledby="git-heading" data-testid="git-panel">
      <div className="flex flex-wrap items-baseline gap-3">
        <h2 id="git-heading" className="text-sm font-medium text-zinc-500">
          Git
        </h2>
        <span className="text-sm">
          branch{" "}
          <span data-testid="git-branch" className="font-mono font-medium">
            {status.branch ?? "(detached HEAD)"}
          </span>
        </span>
        <span className="text-xs text-zinc-500">
          {status.files.length === 0 ? "no changes since the last commit" : `${status.files.length} changed${status.truncated ? " (more not shown)" : ""}`}
        </span>
        <button type="button" className="btn-quiet ml-auto py-1 text-xs" onClick={() => void refresh()}>
          Refresh
        </button>
      </div>
      {loadError && (
        <p role="status" className="text-xs text-amber-700 dark:text-amber-400">
          {loadError}
        </p>
      )}
      {status.files.length > 0 && (
        <ul className="divide-y divide-zinc-100 text-sm dark:divide-zinc-800" aria-label="Changed files">
          {canWrite && (
            <li className="flex items-center gap-2 py-1 text-xs text-zinc-500">
              <input
                type="checkbox"
                aria-label="Select every changed file"
                data-testid="git-select-all"
                checked={allSelected}
                onChange={() => setSelected(allSelected ? new Set() : new Set(status.files.map((f) => f.path)))}
              />
              select all
            </li>
          )}
          {status.files.map((file) => (
            <li key={file.path} data-testid="git-file" data-path={file.path} data-status={statusOf(file)} className="flex flex-wrap items-center gap-2 py-1">
              {canWrite && (
                <input
                  type="checkbox"
                  data-testid="git-file-select"
                  aria-label={`Select ${file.path}`}
                  checked={selected.has(file.path)}
                  onChange={() => toggle(file.path)}
                />
              )}
              <button type="button" className="min-w-0 truncate text-left font-mono hover:underline" onClick={() => void openDiff(file)}>
                {file.origPath ? `${file.origPath} → ${file.path}` : file.path}
              </button>
              <span className="text-xs text-zinc-500">{statusOf(file)}</span>
              {canWrite &&
                (confirming?.path === file.path ? (
                  <span className="ml-auto flex items-center gap-2 text-xs" role="group" aria-label={`Discard ${file.path}?`}>
                    {discardDeletes(file) ? `Delete ${file.path}? It is not in the last commit.` : `Throw away the changes to ${file.path}?`}
                    <button type="button" data-testid="git-discard-confirm" className="btn py-0.5 text-xs" disabled={busy} onClick={() => void onDiscard(file)}>
                      {discardDeletes(file) ? "Delete" : "Discard"}
                    </button>
                    <button type="button" className="btn-quiet py-0.5 text-xs" onClick={() => setConfirming(undefined)}>
                      Cancel
                    </button>
                  </span>
                ) : (
                  <button type="button" data-testid="git-discard" className="btn-quiet ml-auto py-0.5 text-xs" disabled={busy} onClick={() => setConfirming(file)}>
                    Discard
                  </button>
                ))}
            </li>
          ))}
        </ul>
      )}
      {diffError && <p className="text-xs text-red-600">{diffError}</p>}
      {diff && <GitFileDiffView diff={diff} />}
      {canWrite && status.files.length > 0 && (
        <form onSubmit={onCommit} className="space-y-2" aria-label="Commit">
          <label className="block space-y-1 text-sm">
            <span className="block text-xs text-zinc-500">Commit message</span>
            <textarea
              data-testid="git-commit-message"
              className="field min-h-16 w-full font-mono text-sm"
              value={message}
              maxLength={10_000}
              onChange={(e) => setMessage(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) void onCommit(e);
              }}
            />
          </label>
          <div className="flex items-center gap-3">
            <button type="submit" data-testid="git-commit-submit" className="btn py-1.5" disabled={busy}>
              {busy ? "Working…" : `Commit ${selected.size} file${selected.size === 1 ? "" : "s"}`}
            </button>
          </div>
        </form>
      )}
      {actionError && (
        <p role="alert" data-testid="git-error" className="text-sm text-red-600">
          {actionError}
        </p>
      )}
      {done && (
        <p role="status" data-testid="git-done" className="text-sm text-green-700 dark:text-green-400">
          {done}
        </p>
      )}
    </section>
  );
}
