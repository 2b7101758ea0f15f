"use client";

import { useId, useState } from "react";

export interface BashReviewProps {
  command: string;
  description: string | undefined;
  readOnly?: boolean;
  /** The command as edited, or undefined while it is the proposed one. */
  onCommandChange?: (edited: string | undefined) => void;
}

/** The proposed shell command, editable before allowing. */
export function BashReview({ command, description, readOnly = false, onCommandChange }: BashReviewProps) {
  const [value, setValue] = useState(command);
  const id = useId();
  const changed = value !== command;
  const rows = Math.min(Math.max(value.split("\n").length, 1), 12);
  return (
    <div className="space-y-1">
      <div className="flex items-center gap-2">
        <label htmlFor={id} className="text-[11px] font-medium tracking-wide text-zinc-500 uppercase">
          Command
        </label>
        {changed && (
          <>
            <span className="rounded bg-indigo-100 px-1 text-[10px] font-medium text-indigo-800 dark:bg-indigo-950 dark:text-indigo-300">
              edited by you
            </span>
            <button
              type="button"
              className="text-[11px] text-indigo-600 hover:underline dark:text-indigo-400"
              onClick={() => {
                setValue(command);
                onCommandChange?.(undefined);
              }}
            >
              Restore proposed
            </button>
          </>
        )}
      </div>
      <div className="flex items-start rounded-md bg-zinc-900 font-mono text-xs text-zinc-100 ring-1 ring-zinc-800 focus-within:ring-2 focus-within:ring-indigo-500 dark:bg-black">
        <span aria-hidden className="py-1.5 pl-2 text-zinc-500 select-none">
          $
        </span>
        <textarea
          id={id}
          data-testid="approval-command"
          value={value}
          readOnly={readOnly}
          rows={rows}
          spellCheck={false}
          autoCapitalize="off"
          autoComplete="off"
          onChange={(e) => {
            setValue(e.target.value);
            onCommandChange?.(e.target.value === command ? undefined : e.target.value);
          }}
          className="field-sizing-content max-h-72 min-w-0 flex-1 resize-y bg-transparent px-2 py-1.5 leading-[18px] outline-none"
        />
      </div>
      {description && <p className="text-xs text-zinc-600 dark:text-zinc-400">{description}</p>}
    </div>
  );
}
