"use client";

import { useEffect, useRef, useState, type KeyboardEvent } from "react";

export interface DemoScenarioHint {
  name: string;
  triggers: readonly string[];
  description: string;
}

export interface PromptBoxProps {
  /** Why prompting is not possible right now; the box is disabled and says so. */
  disabledReason?: string;
  /** Sends a prompt; resolves with an error message, or undefined when the sidecar took it. */
  onSend: (text: string) => Promise<string | undefined>;
  demoScenarios?: readonly DemoScenarioHint[];
  autoFocus: boolean;
}

/** The prompt textarea: Enter sends, Shift+Enter starts a new line. */
export function PromptBox({ disabledReason, onSend, demoScenarios, autoFocus }: PromptBoxProps) {
  const [draft, setDraft] = useState("");
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string>();
  const ref = useRef<HTMLTextAreaElement>(null);
  const draftRef = useRef(draft);
  draftRef.current = draft;
  const disabled = disabledReason !== undefined;

  useEffect(() => {
    if (autoFocus && !disabled) ref.current?.focus();
  }, [autoFocus, disabled]);

  // Grow with the text, up to a third of the screen.
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, Math.round(window.innerHeight / 3))}px`;
  }, [draft]);

  async function send() {
    const text = draftRef.current.trim();
    if (!text || sending || disabled) return;
    setSending(true);
    setError(undefined);
    const failure = await onSend(text);
    setSending(false);
    if (failure) setError(failure);
    // Clear only what was sent: text typed while the ack was on its way stays.
    else if (draftRef.current.trim() === text) setDraft("");
    ref.current?.focus();
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key !== "Enter" || event.shiftKey || event.altKey || event.nativeEvent.isComposing) return;
    event.preventDefault();
    void send();
  }

  return (
    <div className="space-y-1.5">
      <div
        className={`flex items-end gap-2 rounded-lg border p-2 shadow-sm focus-within:border-indigo-500 focus-within:ring-2 focus-within:ring-indigo-500/30 ${
          error ? "border-red-400 dark:border-red-700" : "border-zinc-300 dark:border-zinc-700"
        } ${disabled ? "bg-zinc-100 dark:bg-zinc-900/50" : "bg-white dark:bg-zinc-900"}`}
      >
        <label htmlFor="prompt-input" className="sr-only">
          Prompt
        </label>
        <textarea
          id="prompt-input"
          ref={ref}
          data-testid="prompt-input"
          rows={1}
          value={draft}
          disabled={disabled}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={onKeyDown}
          aria-describedby={disabled ? "prompt-disabled-reason" : error ? "prompt-error" : "prompt-hint"}
          aria-invalid={error ? true : undefined}
          placeholder={disabled ? "" : "Ask Claude to do something in this workspace…"}
          className="max-h-[33vh] min-h-9 flex-1 resize-none bg-transparent px-1.5 py-1.5 text-sm outline-none placeholder:text-zinc-400 disabled:cursor-not-allowed"
        />
        <button
          type="button"
          data-testid="prompt-send"
          className="btn py-1.5"
          disabled={disabled || sending || draft.trim() === ""}
          onClick={() => void send()}
        >
          {sending ? "Sending…" : "Send"}
        </button>
      </div>
      <div className="flex flex-wrap items-start gap-x-4 gap-y-1 px-1 text-xs text-zinc-500">
        {disabled ? (
          <p
            id="prompt-disabled-reason"
            data-testid="prompt-disabled-reason"
            className="text-zinc-600 dark:text-zinc-400"
          >
            {disabledReason}
          </p>
        ) : error ? (
          <p id="prompt-error" data-testid="prompt-error" role="alert" className="text-red-600 dark:text-red-400">
            {error}
          </p>
        ) : (
          <p id="prompt-hint">
            <kbd className="font-sans">Enter</kbd> sends · <kbd className="font-sans">Shift</kbd>+
            <kbd className="font-sans">Enter</kbd> new line
          </p>
        )}
        {demoScenarios && demoScenarios.length > 0 && !disabled && (
          <DemoHelp
            scenarios={demoScenarios}
            onPick={(word) => {
              setDraft(word);
              ref.current?.focus();
            }}
          />
        )}
      </div>
    </div>
  );
}

function DemoHelp({ scenarios, onPick }: { scenarios: readonly DemoScenarioHint[]; onPick: (word: string) => void }) {
  const [open, setOpen] = useState(false);
  return (
    <div className="ml-auto text-right">
      <button
        type="button"
        data-testid="demo-help"
        aria-expanded={open}
        className="text-indigo-600 hover:underline dark:text-indigo-400"
        onClick={() => setOpen((o) => !o)}
      >
        Demo model prompts {open ? "▴" : "▾"}
      </button>
      {open && (
        <ul className="mt-1 space-y-1 rounded-md border border-zinc-200 bg-white p-2 text-left dark:border-zinc-800 dark:bg-zinc-900">
          {scenarios.map((s) => (
            <li key={s.name} className="flex gap-2">
              <span className="shrink-0">
                {s.triggers.length > 0 ? (
                  s.triggers.slice(0, 3).map((t) => (
                    <button
                      key={t}
                      type="button"
                      onClick={() => onPick(t)}
                      className="mr-1 rounded bg-zinc-100 px-1 font-mono text-[11px] text-zinc-700 hover:bg-indigo-100 dark:bg-zinc-800 dark:text-zinc-300"
                    >
                      {t}
                    </button>
                  ))
                ) : (
                  <span className="font-mono text-[11px]">anything else</span>
                )}
              </span>
              <span>{s.description}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
