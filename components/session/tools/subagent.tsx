"use client";

import { createContext, useContext, useId, useState, type ReactNode } from "react";
import type { ConversationItem } from "../conversation";

/** The subagents' items by parent tool id, and how to draw one item; given by the conversation list. */
export interface SubagentContextValue {
  children: ReadonlyMap<string, readonly ConversationItem[]>;
  render: (item: ConversationItem) => ReactNode;
}

export const SubagentContext = createContext<SubagentContextValue | undefined>(undefined);

/**
 * A subagent's own messages and tool calls, nested under the Agent/Task call that started it.
 * Open while it runs; collapsed once done (it can be reopened).
 */
export function SubagentStream({ toolUseId, done }: { toolUseId: string; done: boolean }) {
  const context = useContext(SubagentContext);
  const items = context?.children.get(toolUseId) ?? [];
  const [choice, setChoice] = useState<boolean>();
  const open = choice ?? !done;
  const id = useId();
  if (!context || items.length === 0) return null;
  return (
    <div
      data-testid="subagent-stream"
      data-parent={toolUseId}
      data-done={done}
      className="border-l-2 border-indigo-200 pl-2 dark:border-indigo-900"
    >
      <button
        type="button"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setChoice(!open)}
        className="flex items-center gap-1.5 text-[11px] font-medium tracking-wide text-zinc-500 uppercase focus-visible:outline-2 focus-visible:outline-indigo-500"
      >
        <span aria-hidden className="w-2.5">
          {open ? "▾" : "▸"}
        </span>
        Subagent · {items.length} step{items.length === 1 ? "" : "s"}
        {!done && (
          <span className="ml-1 size-1.5 motion-safe:animate-pulse rounded-full bg-indigo-500 normal-case" aria-label="running" />
        )}
      </button>
      {open && (
        <ol id={id} className="mt-1 space-y-2">
          {items.map((item) => (
            <li key={item.key}>{context.render(item)}</li>
          ))}
        </ol>
      )}
    </div>
  );
}
