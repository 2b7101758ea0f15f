"use client";

import { useId, useState } from "react";
import { todoCounts, type Todo } from "./tool-data";

const statusMark = {
  completed: { icon: "✓", label: "done", tone: "text-emerald-600 dark:text-emerald-400" },
  in_progress: { icon: "◐", label: "in progress", tone: "text-indigo-600 dark:text-indigo-400" },
  pending: { icon: "○", label: "to do", tone: "text-zinc-400" },
} as const;

/** A TodoWrite checklist: what is done, what runs now, what is left. */
export function TodoList({ todos }: { todos: readonly Todo[] }) {
  if (todos.length === 0) return <p className="text-xs text-zinc-500 italic">The list is empty.</p>;
  return (
    <ul data-testid="todo-list" className="space-y-0.5 text-sm">
      {todos.map((todo, n) => {
        const mark = statusMark[todo.status];
        return (
          <li key={n} data-testid="todo-item" data-status={todo.status} className="flex items-start gap-2">
            <span aria-hidden className={`w-4 shrink-0 text-center ${mark.tone}`}>
              {mark.icon}
            </span>
            <span
              className={
                todo.status === "completed"
                  ? "text-zinc-500 line-through"
                  : todo.status === "in_progress"
                    ? "font-medium"
                    : ""
              }
            >
              <span className="sr-only">{mark.label}: </span>
              {todo.status === "in_progress" && todo.activeForm ? todo.activeForm : todo.content}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

/** The session's latest checklist, pinned above the prompt box; collapsible. */
export function PinnedTodos({ todos }: { todos: readonly Todo[] }) {
  const [open, setOpen] = useState(true);
  const id = useId();
  const { done, total } = todoCounts(todos);
  const current = todos.find((t) => t.status === "in_progress");
  return (
    <section
      data-testid="pinned-todos"
      aria-label="Task list"
      className="mb-2 rounded-md border border-zinc-200 bg-white px-3 py-1.5 dark:border-zinc-800 dark:bg-zinc-900"
    >
      <button
        type="button"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setOpen((o) => !o)}
        className="flex w-full items-center gap-2 text-left text-xs text-zinc-600 focus-visible:outline-2 focus-visible:outline-indigo-500 dark:text-zinc-400"
      >
        <span aria-hidden className="w-2.5 text-[11px] text-zinc-400">
          {open ? "▾" : "▸"}
        </span>
        <span className="font-medium">Tasks</span>
        <span className="tabular-nums">
          {done}/{total} done
        </span>
        {!open && current && <span className="min-w-0 flex-1 truncate">· {current.activeForm ?? current.content}</span>}
      </button>
      {open && (
        <div id={id} className="mt-1 max-h-48 overflow-auto">
          <TodoList todos={todos} />
        </div>
      )}
    </section>
  );
}
