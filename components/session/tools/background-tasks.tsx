"use client";

import { useState } from "react";
import type { BackgroundTask } from "./tool-data";

/**
 * The CLI's background tasks (background Bash commands, async subagents), each with Stop
 * (`stop_task`). Shown only while there are some.
 */
export function BackgroundTasks({
  tasks,
  canStop,
  onStop,
}: {
  tasks: readonly BackgroundTask[];
  canStop: boolean;
  onStop: (taskId: string) => Promise<string | undefined>;
}) {
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<string>();
  if (tasks.length === 0) return null;
  return (
    <section
      data-testid="background-tasks"
      aria-label="Background tasks"
      className="mb-2 rounded-md border border-zinc-200 bg-white px-3 py-1.5 text-xs dark:border-zinc-800 dark:bg-zinc-900"
    >
      <div className="mb-1 font-medium text-zinc-600 dark:text-zinc-400">
        Running in the background ({tasks.length})
      </div>
      <ul className="space-y-1">
        {tasks.map((t) => (
          <li key={t.taskId} data-testid="background-task" data-task-id={t.taskId} className="flex items-center gap-2">
            <span aria-hidden className="size-1.5 motion-safe:animate-pulse rounded-full bg-indigo-500" />
            <span className="rounded bg-zinc-100 px-1 font-mono text-[10px] text-zinc-500 dark:bg-zinc-800">
              {t.type === "local_bash" ? "shell" : t.type === "local_agent" ? "agent" : t.type}
            </span>
            <span className="min-w-0 flex-1 truncate">{t.description}</span>
            <button
              type="button"
              data-testid="background-task-stop"
              className="btn-quiet py-0.5 text-xs"
              disabled={!canStop || busy !== undefined}
              title={canStop ? "Stop this task" : "Viewers cannot stop tasks."}
              onClick={async () => {
                setBusy(t.taskId);
                setError(undefined);
                const failure = await onStop(t.taskId);
                setBusy(undefined);
                if (failure) setError(failure);
              }}
            >
              {busy === t.taskId ? "Stopping…" : "Stop"}
            </button>
          </li>
        ))}
      </ul>
      {error && (
        <p role="alert" data-testid="background-task-error" className="mt-1 text-red-700 dark:text-red-300">
          {error}
        </p>
      )}
    </section>
  );
}
