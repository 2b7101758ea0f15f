"use client";

import { useState } from "react";
import type { QueuedPrompt } from "./session-facts";

/**
 * Prompts the CLI holds behind the running turn (its `command_lifecycle` said `queued`), each
 * cancellable until it starts: the CLI drops it (`cancel_async_message`) and says so in the log.
 */
export function QueuedPrompts({
  queued,
  onCancel,
}: {
  queued: readonly QueuedPrompt[];
  /** Absent for people who may not steer the session. */
  onCancel: ((seq: number) => Promise<string | undefined>) | undefined;
}) {
  return (
    <section aria-label="Queued prompts" className="space-y-1">
      <h2 className="px-1 text-[11px] font-medium text-zinc-500">
        Queued: {queued.length === 1 ? "runs" : "run"} when the current turn ends
      </h2>
      <ul className="space-y-1">
        {queued.map((q) => (
          <QueuedRow key={q.seq} prompt={q} onCancel={onCancel} />
        ))}
      </ul>
    </section>
  );
}

function QueuedRow({
  prompt,
  onCancel,
}: {
  prompt: QueuedPrompt;
  onCancel: ((seq: number) => Promise<string | undefined>) | undefined;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  return (
    <li
      data-testid="queued-prompt"
      data-seq={prompt.seq}
      className="flex items-center gap-2 rounded-md border border-dashed border-zinc-300 bg-white/70 px-2 py-1 text-xs dark:border-zinc-700 dark:bg-zinc-900/60"
    >
      <span className="shrink-0 text-zinc-500">{prompt.author}</span>
      <span className="min-w-0 flex-1 truncate text-zinc-800 dark:text-zinc-200">
        {prompt.text || "(images only)"}
        {prompt.images > 0 && <span className="ml-1 text-zinc-500">· {prompt.images} image{prompt.images === 1 ? "" : "s"}</span>}
      </span>
      {error && (
        <span role="alert" className="text-red-600 dark:text-red-400">
          {error}
        </span>
      )}
      {onCancel && (
        <button
          type="button"
          data-testid="queued-prompt-cancel"
          className="btn-quiet py-0.5 text-xs"
          disabled={busy}
          aria-label={`Cancel the queued prompt: ${prompt.text.slice(0, 60)}`}
          onClick={async () => {
            setBusy(true);
            setError(undefined);
            const failure = await onCancel(prompt.seq);
            setBusy(false);
            if (failure) setError(failure);
          }}
        >
          {busy ? "Cancelling…" : "Cancel"}
        </button>
      )}
    </li>
  );
}
