"use client";

import { memo, useEffect, useId, useRef, useState } from "react";
import type { ContextUsage, ModelList, ModelOption } from "@/server/shared/wire/session-controls";
import { formatCompactCount } from "@/components/format/money";

/**
 * The model picker: the CLI's `list_models`, switched with `set_model`. A choice shows as
 * pending until the CLI confirms it (the ack comes after the CLI's answer), like the mode.
 */
export const ModelPicker = memo(function ModelPicker(props: {
  current: string | null | undefined;
  list: ModelList | undefined;
  disabledReason?: string | undefined;
  onOpen: () => void;
  onPick: (model: string) => Promise<string | undefined>;
}) {
  const { current, list, disabledReason, onOpen, onPick } = props;
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const [pending, setPending] = useState<string>();
  const [error, setError] = useState<string>();
  const listId = useId();
  const rootRef = useRef<HTMLDivElement>(null);
  const models = list?.models ?? [];
  const selected = models.find((m) => m.value === current || m.resolvedModel === current);
  const label = selected?.displayName ?? current ?? "CLI default";

  useEffect(() => {
    if (!open) return;
    const close = (e: MouseEvent) => {
      if (!rootRef.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("mousedown", close);
    return () => document.removeEventListener("mousedown", close);
  }, [open]);

  async function choose(model: ModelOption) {
    setOpen(false);
    if (model.value === current) return;
    setPending(model.displayName);
    setError(undefined);
    const failure = await onPick(model.value);
    setPending(undefined);
    if (failure) setError(failure);
  }

  return (
    <div ref={rootRef} className="relative flex items-center gap-1.5">
      <span className="text-xs text-zinc-500" id={`${listId}-label`}>
        Model
      </span>
      <button
        type="button"
        data-testid="model-picker"
        data-model={selected?.value ?? current ?? ""}
        data-pending={pending ?? ""}
        aria-haspopup="listbox"
        aria-expanded={open}
        aria-labelledby={`${listId}-label ${listId}-button`}
        id={`${listId}-button`}
        disabled={disabledReason !== undefined || pending !== undefined}
        title={disabledReason ?? selected?.description}
        onClick={() => {
          if (!open) {
            onOpen();
            setActive(Math.max(0, models.indexOf(selected!)));
          }
          setOpen((o) => !o);
        }}
        onKeyDown={(e) => {
          if (!open) return;
          if (e.key === "Escape") {
            e.preventDefault();
            setOpen(false);
          } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
            e.preventDefault();
            const step = e.key === "ArrowDown" ? 1 : -1;
            setActive((i) => (i + step + models.length) % Math.max(models.length, 1));
          } else if (e.key === "Enter" && models[active]) {
            e.preventDefault();
            void choose(models[active]);
          }
        }}
        className="field w-auto max-w-48 truncate py-1 text-left text-xs disabled:cursor-not-allowed disabled:opacity-60"
      >
        {label} ▾
      </button>
      {pending && (
        <span role="status" data-testid="model-pending" className="text-xs whitespace-nowrap text-zinc-500">
          switching to {pending}…
        </span>
      )}
      {open && (
        <ul
          role="listbox"
          id={listId}
          aria-label="Models"
          aria-activedescendant={models[active] ? `${listId}-${active}` : undefined}
          className="absolute top-full right-0 z-30 mt-1 max-h-80 w-80 overflow-auto rounded-lg border border-zinc-200 bg-white py-1 shadow-lg dark:border-zinc-700 dark:bg-zinc-900"
        >
          {models.length === 0 && (
            <li className="px-3 py-2 text-xs text-zinc-500">
              {list?.source === "none"
                ? "The CLI has not listed its models yet. Send a prompt to start it, then try again."
                : "Loading the models…"}
            </li>
          )}
          {models.map((m, i) => (
            <li
              key={m.value}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={m === selected}
              data-testid="model-option"
              data-model={m.value}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => void choose(m)}
              onMouseEnter={() => setActive(i)}
              className={`cursor-pointer px-3 py-1.5 text-xs ${i === active ? "bg-indigo-50 dark:bg-indigo-950/60" : ""}`}
            >
              <span className="font-medium">
                {m.displayName}
                {m === selected && <span className="ml-1 text-indigo-600 dark:text-indigo-400">✓</span>}
              </span>
              {m.description && <span className="block text-zinc-500">{m.description}</span>}
            </li>
          ))}
        </ul>
      )}
      {error && (
        <span
          role="alert"
          data-testid="model-error"
          className="absolute top-full right-0 z-10 mt-1 w-64 rounded-md bg-red-50 px-2 py-1 text-xs text-red-800 shadow dark:bg-red-950 dark:text-red-300"
        >
          {error}
        </span>
      )}
    </div>
  );
});

const thinkingChoices: { value: string; label: string; budget: number | null }[] = [
  { value: "default", label: "CLI default", budget: null },
  { value: "0", label: "Off", budget: 0 },
  { value: "4000", label: "4k tokens", budget: 4000 },
  { value: "16000", label: "16k tokens", budget: 16000 },
  { value: "32000", label: "32k tokens", budget: 32000 },
  { value: "64000", label: "64k tokens", budget: 64000 },
];

/** The thinking budget (`set_max_thinking_tokens`); kept for the session's later CLI children. */
export const ThinkingSelect = memo(function ThinkingSelect(props: {
  budget: number | null | undefined;
  /** The model in force thinks adaptively: the CLI does not pass a budget to it. */
  adaptive: boolean;
  disabledReason?: string | undefined;
  onSet: (budget: number | null) => Promise<string | undefined>;
}) {
  const { budget, adaptive, disabledReason, onSet } = props;
  const adaptiveNote =
    "This model decides how much to think (adaptive thinking); the CLI applies the budget only to models with a fixed thinking budget. It is kept for when you switch to one.";
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string>();
  const value = budget === undefined || budget === null ? "default" : String(budget);
  const known = thinkingChoices.some((c) => c.value === value);
  return (
    <div className="relative flex items-center gap-1.5">
      <label htmlFor="thinking-select" className="text-xs text-zinc-500">
        Thinking
      </label>
      <select
        id="thinking-select"
        data-testid="thinking-select"
        value={value}
        disabled={disabledReason !== undefined || pending}
        title={disabledReason ?? (adaptive ? adaptiveNote : "The most tokens Claude may spend thinking per answer")}
        aria-describedby={adaptive ? "thinking-adaptive" : undefined}
        onChange={async (e) => {
          const choice = thinkingChoices.find((c) => c.value === e.target.value);
          if (!choice) return;
          setPending(true);
          setError(undefined);
          const failure = await onSet(choice.budget);
          setPending(false);
          if (failure) setError(failure);
        }}
        className="field w-auto py-1 pr-7 text-xs disabled:cursor-not-allowed disabled:opacity-60"
      >
        {!known && <option value={value}>{value} tokens</option>}
        {thinkingChoices.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
      {adaptive && (
        <span id="thinking-adaptive" data-testid="thinking-adaptive" title={adaptiveNote} className="text-[11px] text-zinc-500">
          adaptive
        </span>
      )}
      {error && (
        <span
          role="alert"
          className="absolute top-full right-0 z-10 mt-1 w-64 rounded-md bg-red-50 px-2 py-1 text-xs text-red-800 shadow dark:bg-red-950 dark:text-red-300"
        >
          {error}
        </span>
      )}
    </div>
  );
});

/**
 * How full the context window is (`get_context_usage`), with its categories on demand and a
 * compact action (sends `/compact`, as typed in the terminal).
 */
export const ContextMeter = memo(function ContextMeter(props: {
  usage: ContextUsage | undefined;
  error?: string | undefined;
  loading: boolean;
  onRefresh: () => void;
  /** Absent for people who may not prompt. */
  onCompact: (() => Promise<string | undefined>) | undefined;
}) {
  const { usage, error, loading, onRefresh, onCompact } = props;
  const [open, setOpen] = useState(false);
  const [compacting, setCompacting] = useState(false);
  const [compactError, setCompactError] = useState<string>();
  const detailsId = useId();
  const percent = usage?.percentage;
  const tone =
    percent === undefined ? "bg-zinc-300" : percent >= 85 ? "bg-red-500" : percent >= 60 ? "bg-amber-500" : "bg-emerald-500";
  const summary = usage
    ? `${formatCompactCount(usage.totalTokens)} of ${formatCompactCount(usage.maxTokens)} tokens (${usage.percentage}%)`
    : (error ?? (loading ? "reading…" : "not known yet"));
  return (
    <div className="relative">
      <button
        type="button"
        data-testid="context-meter"
        data-percent={percent ?? ""}
        aria-expanded={open}
        aria-controls={detailsId}
        title={`Context: ${summary}`}
        onClick={() => {
          setOpen((o) => !o);
          if (!open) onRefresh();
        }}
        className="inline-flex items-center gap-1.5 rounded-md px-1.5 py-1 text-xs text-zinc-600 hover:bg-zinc-100 dark:text-zinc-400 dark:hover:bg-zinc-800"
      >
        <span className="sr-only">Context used: </span>
        <span
          aria-hidden
          className="relative inline-block h-1.5 w-16 overflow-hidden rounded-full bg-zinc-200 dark:bg-zinc-700"
        >
          <span className={`absolute inset-y-0 left-0 ${tone}`} style={{ width: `${Math.max(percent ?? 0, percent ? 2 : 0)}%` }} />
        </span>
        <span className="tabular-nums">{percent === undefined ? "–" : `${percent}%`}</span>
      </button>
      {open && (
        <div
          id={detailsId}
          data-testid="context-details"
          className="absolute top-full right-0 z-30 mt-1 w-72 space-y-2 rounded-lg border border-zinc-200 bg-white p-3 text-xs shadow-lg dark:border-zinc-700 dark:bg-zinc-900"
        >
          <p className="font-medium">Context: {summary}</p>
          {usage && (
            <table className="w-full">
              <tbody>
                {usage.categories
                  .filter((c) => c.tokens > 0)
                  .map((c) => (
                    <tr key={c.name} className={c.kind === "free" ? "text-zinc-400" : ""}>
                      <td className="py-0.5">{c.name}</td>
                      <td className="py-0.5 text-right tabular-nums">{formatCompactCount(c.tokens)}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          )}
          {error && <p className="text-amber-700 dark:text-amber-300">{error}</p>}
          {onCompact && (
            <div className="flex items-center gap-2">
              <button
                type="button"
                data-testid="context-compact"
                className="btn-quiet py-1 text-xs"
                disabled={compacting}
                onClick={async () => {
                  setCompacting(true);
                  setCompactError(undefined);
                  const failure = await onCompact();
                  setCompacting(false);
                  if (failure) setCompactError(failure);
                  else setOpen(false);
                }}
              >
                {compacting ? "Sending /compact…" : "Compact now"}
              </button>
              <span className="text-zinc-500">summarises the conversation to free space</span>
            </div>
          )}
          {compactError && (
            <p role="alert" className="text-red-600 dark:text-red-400">
              {compactError}
            </p>
          )}
        </div>
      )}
    </div>
  );
});
