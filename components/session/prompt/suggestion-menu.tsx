"use client";

import { useEffect, useRef } from "react";

export interface MenuItem {
  key: string;
  label: string;
  detail?: string | undefined;
  /** Extra data attributes for tests and styling (`data-path`, …). */
  data?: Record<string, string>;
}

/**
 * The popup list above the prompt for `/` and `@`: a listbox driven from the textarea (the
 * focus stays there; `aria-activedescendant` names the active option), clickable too.
 */
export function SuggestionMenu(props: {
  id: string;
  testId: string;
  itemTestId: string;
  label: string;
  items: readonly MenuItem[];
  active: number;
  /** Shown instead of items (loading, nothing found, an error). */
  status?: string | undefined;
  onPick: (index: number) => void;
  onHover: (index: number) => void;
}) {
  const { id, testId, itemTestId, label, items, active, status, onPick, onHover } = props;
  const listRef = useRef<HTMLUListElement>(null);
  useEffect(() => {
    listRef.current?.querySelector(`[data-index="${active}"]`)?.scrollIntoView({ block: "nearest" });
  }, [active]);
  return (
    <div
      data-testid={testId}
      className="absolute right-0 bottom-full left-0 z-20 mb-1 overflow-hidden rounded-lg border border-zinc-200 bg-white shadow-lg dark:border-zinc-700 dark:bg-zinc-900"
    >
      <div className="border-b border-zinc-100 px-3 py-1 text-[11px] text-zinc-500 dark:border-zinc-800">
        {label} · <kbd className="font-sans">↑</kbd>
        <kbd className="font-sans">↓</kbd> choose · <kbd className="font-sans">Enter</kbd> insert ·{" "}
        <kbd className="font-sans">Esc</kbd> close
      </div>
      {items.length === 0 ? (
        <p role="status" className="px-3 py-2 text-xs text-zinc-500">
          {status ?? "Nothing matches."}
        </p>
      ) : (
        <ul ref={listRef} id={id} role="listbox" aria-label={label} className="max-h-64 overflow-auto py-1">
          {items.map((item, i) => (
            <li
              key={item.key}
              id={`${id}-${i}`}
              role="option"
              aria-selected={i === active}
              data-index={i}
              data-testid={itemTestId}
              {...Object.fromEntries(Object.entries(item.data ?? {}).map(([k, v]) => [`data-${k}`, v]))}
              onMouseDown={(e) => {
                // keep the focus in the textarea
                e.preventDefault();
                onPick(i);
              }}
              onMouseEnter={() => onHover(i)}
              className={`flex cursor-pointer items-baseline gap-3 px-3 py-1.5 text-sm ${
                i === active ? "bg-indigo-50 text-indigo-900 dark:bg-indigo-950/60 dark:text-indigo-100" : ""
              }`}
            >
              <span className="shrink-0 font-mono">{item.label}</span>
              {item.detail && <span className="min-w-0 truncate text-xs text-zinc-500">{item.detail}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
