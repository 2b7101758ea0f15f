"use client";

/**
 * Rewind the workspace's files to how they were before a prompt: a dry run first
 * (`rewind-preview`: the files that go back, with insertions and deletions, and the files
 * changed since by someone else, left alone unless ticked), then `rewind-confirm`.
 */
import { useEffect, useRef, useState } from "react";
import type { Socket } from "socket.io-client";
import { changesCommand, sendChangesCommand, type RewindPreview, type TakeBackResult } from "./changes-client";
import { promptName } from "./change-notices";

export interface RewindDialogProps {
  sessionId: string;
  promptSeq: number;
  /** The prompt's text: the dialog names the prompt by its words. */
  promptText?: string | undefined;
  socket: Socket | undefined;
  newCommandId: () => string;
  onClose: () => void;
}

export function RewindDialog({ sessionId, promptSeq, promptText, socket, newCommandId, onClose }: RewindDialogProps) {
  const [preview, setPreview] = useState<RewindPreview>();
  const [error, setError] = useState<string>();
  const [includeConflicts, setIncludeConflicts] = useState(false);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<TakeBackResult>();
  const [attempt, setAttempt] = useState(0);
  const dialog = useRef<HTMLDivElement>(null);
  // one id per confirmation: a retried confirm is the same command
  const confirmId = useRef(newCommandId());

  useEffect(() => {
    let alive = true;
    setError(undefined);
    void sendChangesCommand<RewindPreview>(socket, changesCommand.rewind, { sessionId, promptSeq, commandId: newCommandId() }).then((ack) => {
      if (!alive) return;
      if (ack.ok) setPreview(ack.data);
      else setError(ack.error.message);
    });
    return () => {
      alive = false;
    };
  }, [socket, sessionId, promptSeq, newCommandId, attempt]);

  useEffect(() => {
    dialog.current?.focus();
  }, []);

  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    const ack = await sendChangesCommand<TakeBackResult>(socket, changesCommand.rewind, {
      sessionId,
      promptSeq,
      confirm: true,
      includeConflicts,
      commandId: confirmId.current,
    });
    setBusy(false);
    if (ack.ok) setDone(ack.data);
    else {
      setError(ack.error.message);
      confirmId.current = newCommandId();
    }
  };

  const conflicts = new Set(preview?.conflicts ?? []);
  const lost = (preview?.files ?? []).filter((f) => includeConflicts || !conflicts.has(f.path));
  return (
    <div className="fixed inset-0 z-40 flex items-start justify-center bg-black/30 p-4 pt-24" onClick={onClose}>
      <div
        ref={dialog}
        role="dialog"
        aria-modal="true"
        aria-labelledby="rewind-title"
        tabIndex={-1}
        data-testid="rewind-dialog"
        className="max-h-[70vh] w-full max-w-xl overflow-auto rounded-lg bg-white p-4 shadow-xl dark:bg-zinc-900"
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => e.key === "Escape" && onClose()}
      >
        <h2 id="rewind-title" className="text-base font-semibold">
          Rewind files to before {promptName(promptText) ? `the prompt ${promptName(promptText)}` : "this prompt"}
        </h2>
        {error && (
          <p role="alert" data-testid="rewind-error" className="mt-2 rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 dark:bg-red-950/50 dark:text-red-300">
            {error}{" "}
            {!preview && (
              <button type="button" className="font-medium underline" onClick={() => setAttempt((n) => n + 1)}>
                Retry
              </button>
            )}
          </p>
        )}
        {!preview && !error && <p className="mt-3 text-sm text-zinc-500">Working out what would change…</p>}
        {done ? (
          <div data-testid="rewind-done" role="status" className="mt-3 space-y-2 text-sm">
            <p>
              Rewound {done.changed.length} file{done.changed.length === 1 ? "" : "s"}.
              {done.skipped.length > 0 && ` Left alone (changed since): ${done.skipped.join(", ")}.`}
            </p>
            <button type="button" className="btn" onClick={onClose}>
              Close
            </button>
          </div>
        ) : (
          preview && (
            <div data-testid="rewind-preview" data-files={lost.length} data-insertions={preview.insertions} data-deletions={preview.deletions} className="mt-3 space-y-3 text-sm">
              {preview.unavailable ? (
                <p data-testid="rewind-unavailable">{preview.unavailable}</p>
              ) : preview.files.length === 0 ? (
                <p>The files are already as they were before this prompt: nothing to rewind.</p>
              ) : (
                <>
                  <p>
                    <span data-testid="rewind-count">{preview.files.length}</span> file{preview.files.length === 1 ? "" : "s"} go back:{" "}
                    <span className="text-emerald-700 dark:text-emerald-400" data-testid="rewind-insertions">
                      +{preview.insertions}
                    </span>{" "}
                    <span className="text-red-700 dark:text-red-400" data-testid="rewind-deletions">
                      −{preview.deletions}
                    </span>{" "}
                    lines. What these files hold now is lost:
                  </p>
                  <ul className="max-h-60 overflow-auto rounded-md border border-zinc-200 font-mono text-xs dark:border-zinc-800" aria-label="Files that will be lost">
                    {preview.files.map((f) => (
                      <li key={f.path} data-testid="rewind-file" data-path={f.path} data-conflict={conflicts.has(f.path)} className="flex gap-2 px-2 py-1">
                        <span className="flex-1 truncate">{f.path}</span>
                        <span className="text-zinc-500">{f.status === "added" ? "comes back" : f.status === "deleted" ? "removed" : "restored"}</span>
                        {conflicts.has(f.path) && <span className="text-amber-700 dark:text-amber-400">changed since</span>}
                      </li>
                    ))}
                  </ul>
                  {conflicts.size > 0 && (
                    <div data-testid="rewind-conflicts" className="rounded-md bg-amber-50 px-3 py-2 text-xs text-amber-900 dark:bg-amber-950/50 dark:text-amber-200">
                      <p>
                        Changed since this session last touched them (by a person or another session): {[...conflicts].join(", ")}. They are
                        left alone unless you include them.
                      </p>
                      <label className="mt-1 flex items-center gap-2">
                        <input
                          type="checkbox"
                          data-testid="rewind-include-conflicts"
                          checked={includeConflicts}
                          onChange={(e) => setIncludeConflicts(e.target.checked)}
                        />
                        Rewind these too (their current contents are lost)
                      </label>
                    </div>
                  )}
                </>
              )}
              <div className="flex justify-end gap-2">
                <button type="button" className="btn-quiet" onClick={onClose}>
                  Cancel
                </button>
                {!preview.unavailable && preview.files.length > 0 && (
                  <button type="button" data-testid="rewind-confirm" className="btn" disabled={busy} onClick={() => void confirm()}>
                    {busy ? "Rewinding…" : `Rewind ${lost.length} file${lost.length === 1 ? "" : "s"}`}
                  </button>
                )}
              </div>
            </div>
          )
        )}
      </div>
    </div>
  );
}
