"use client";

import { memo, useCallback, useEffect, useId, useMemo, useRef, useState, type KeyboardEvent } from "react";
import type { SlashCommandInfo } from "@/server/shared/wire/session-controls";
import { imageFilesOf, readAttachments, releaseAttachment, type Attachment } from "./attachments";
import { loadDraft, saveDraft } from "./draft-store";
import { QueuedPrompts } from "./queued-prompts";
import type { QueuedPrompt } from "./session-facts";
import { SuggestionMenu, type MenuItem } from "./suggestion-menu";
import { applyCompletion, filterCommands, findTrigger, type Trigger } from "./triggers";

export interface DemoScenarioHint {
  name: string;
  triggers: readonly string[];
  description: string;
}

export interface OutgoingImage {
  mediaType: Attachment["mediaType"];
  data: string;
  name: string;
}

export interface PromptBoxProps {
  /** Drafts are kept per session (localStorage). */
  sessionId: string;
  /** Why prompting is not possible right now; the box is disabled and says so. */
  disabledReason?: string;
  /** Sends a prompt; resolves with an error message, or undefined when the sidecar took it. */
  onSend: (text: string, images: OutgoingImage[]) => Promise<string | undefined>;
  demoScenarios?: readonly DemoScenarioHint[];
  autoFocus: boolean;
  /** The session's slash commands (the `/` menu). */
  slashCommands?: readonly SlashCommandInfo[];
  /** File suggestions for `@` (the CLI's fuzzy search); an error message when it failed. */
  suggestFiles?: (query: string) => Promise<{ paths: string[] } | { error: string }>;
  /** Prompts the CLI holds queued behind the running turn. */
  queued?: readonly QueuedPrompt[];
  onCancelQueued?: (seq: number) => Promise<string | undefined>;
  /**
   * A turn is running and this person may stop it: Send turns into Stop (Send stays beside it
   * while there is text to send), and Esc in the box stops the turn.
   */
  running?: boolean;
  /** Stops the running turn (the session's interrupt); resolves with an error message, if any. */
  onStop?: () => Promise<string | undefined>;
  /** The stop asked for has not been answered yet. */
  stopping?: boolean;
}

/** How long typing pauses before file suggestions are asked for. */
const suggestDelayMs = 120;
/**
 * While the menu stays open on a query nothing matched, it is asked again after these pauses: a
 * file can appear on disk, and a CLI's file index is still being built on its first asks.
 */
const suggestRetryMs = [1_500, 4_000];

/**
 * The prompt box, like the terminal's: Enter sends, Shift+Enter starts a new line; `/` at the
 * start opens the session's slash commands, `@` opens file suggestions (both keyboard-driven);
 * images are pasted or dropped in and sent as image blocks; the draft survives a reload.
 */
/**
 * Memoized: the session page renders again for every streamed event, and none of the box's
 * props change with them (the page keeps its callbacks and the facts' arrays stable).
 */
export const PromptBox = memo(function PromptBox(props: PromptBoxProps) {
  const { sessionId, disabledReason, onSend, demoScenarios, autoFocus, slashCommands = [], suggestFiles } = props;
  const [draft, setDraft] = useState("");
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const inFlight = useRef(new Set<Attachment>());
  const [error, setError] = useState<string>();
  const [trigger, setTrigger] = useState<Trigger>();
  const [dismissed, setDismissed] = useState<string>();
  const [active, setActive] = useState(0);
  const [files, setFiles] = useState<{ query: string; paths: string[]; error?: string }>();
  const [dragging, setDragging] = useState(false);
  const ref = useRef<HTMLTextAreaElement>(null);
  const draftRef = useRef(draft);
  draftRef.current = draft;
  const attachmentsRef = useRef(attachments);
  attachmentsRef.current = attachments;
  const restored = useRef(false);
  const menuId = useId();
  const disabled = disabledReason !== undefined;

  // The draft of this session, once on the client (localStorage is not there on the server).
  useEffect(() => {
    restored.current = true;
    const saved = loadDraft(sessionId);
    if (saved) setDraft(saved);
  }, [sessionId]);
  useEffect(() => {
    if (restored.current) saveDraft(sessionId, draft);
  }, [sessionId, draft]);
  useEffect(() => () => attachmentsRef.current.forEach(releaseAttachment), []);

  useEffect(() => {
    if (autoFocus && !disabled) ref.current?.focus();
  }, [autoFocus, disabled]);

  // Grow with the text, up to a third of the screen.
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    // Empty (after every send): its rows decide, with no forced layout of the whole page.
    if (draft === "") {
      el.style.height = "";
      return;
    }
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, Math.round(window.innerHeight / 3))}px`;
  }, [draft]);

  const triggerKey = trigger ? `${trigger.kind}:${trigger.start}:${trigger.query}` : undefined;
  const open = trigger !== undefined && triggerKey !== dismissed && !disabled;

  // File suggestions: debounced, and only the answer to the latest query is kept.
  const mentionQuery = open && trigger?.kind === "mention" ? trigger.query : undefined;
  useEffect(() => {
    if (mentionQuery === undefined || !suggestFiles) return;
    let current = true;
    let t: ReturnType<typeof setTimeout>;
    const ask = (attempt: number) => async () => {
      const answer = await suggestFiles(mentionQuery);
      if (!current) return;
      setFiles("error" in answer ? { query: mentionQuery, paths: [], error: answer.error } : { query: mentionQuery, paths: answer.paths });
      const retry = suggestRetryMs[attempt];
      if (!("error" in answer) && answer.paths.length === 0 && retry !== undefined) t = setTimeout(ask(attempt + 1), retry);
    };
    t = setTimeout(ask(0), suggestDelayMs);
    return () => {
      current = false;
      clearTimeout(t);
    };
  }, [mentionQuery, suggestFiles]);

  const items: MenuItem[] = useMemo(() => {
    if (!open || !trigger) return [];
    if (trigger.kind === "slash") {
      return filterCommands(slashCommands, trigger.query).map((c) => ({
        key: c.name,
        label: `/${c.name}${c.argumentHint ? ` ${c.argumentHint}` : ""}`,
        detail: c.description,
        data: { command: c.name },
      }));
    }
    return (files?.paths ?? []).map((p) => ({ key: p, label: `@${p}`, data: { path: p } }));
  }, [open, trigger, slashCommands, files]);

  useEffect(() => setActive(0), [triggerKey, items.length]);

  const syncTrigger = useCallback(() => {
    const el = ref.current;
    if (!el) return;
    setTrigger(el.selectionStart === el.selectionEnd ? findTrigger(el.value, el.selectionStart) : undefined);
  }, []);

  function pick(index: number) {
    const item = items[index];
    if (!trigger || !item) return;
    const replacement = trigger.kind === "slash" ? `/${item.key}` : `@${item.key}`;
    const next = applyCompletion(draftRef.current, trigger, replacement);
    setDraft(next.text);
    setTrigger(undefined);
    requestAnimationFrame(() => {
      const el = ref.current;
      if (!el) return;
      el.focus();
      el.setSelectionRange(next.caret, next.caret);
      // a folder keeps the menu open for what is inside it
      setTrigger(findTrigger(el.value, el.selectionStart));
    });
  }

  async function addFiles(list: File[]) {
    if (list.length === 0) return;
    const { added, errors } = await readAttachments(list, attachmentsRef.current);
    if (added.length > 0) setAttachments((a) => [...a, ...added]);
    setError(errors.length > 0 ? errors.join(" ") : undefined);
  }

  function remove(key: string) {
    setAttachments((a) => {
      const gone = a.find((x) => x.key === key);
      if (gone) releaseAttachment(gone);
      return a.filter((x) => x.key !== key);
    });
    ref.current?.focus();
  }

  /**
   * Sends what the box holds. The text leaves the box at once (the conversation shows it as
   * sending, and an accepted prompt changes nothing here: the page draws nothing more for it
   * while the CLI starts working), so the next prompt can be typed and sent right away (`onSend`
   * keeps their order). A refused prompt's text comes back into the box (after anything typed
   * meanwhile); images leave the box when their prompt is accepted.
   */
  function send() {
    const text = draftRef.current.trim();
    const images = attachmentsRef.current.filter((a) => !inFlight.current.has(a));
    if ((!text && images.length === 0) || disabled) return;
    for (const a of images) inFlight.current.add(a);
    setError(undefined);
    if (text) {
      setDraft("");
      setTrigger(undefined);
    }
    void (async () => {
      const failure = await onSend(
        text,
        images.map((a) => ({ mediaType: a.mediaType, data: a.data, name: a.name })),
      );
      for (const a of images) inFlight.current.delete(a);
      if (failure) {
        setError(failure);
        if (text) setDraft(draftRef.current.trim() === "" ? text : `${draftRef.current}\n${text}`);
      } else {
        setAttachments((a) => {
          for (const x of a) if (images.includes(x)) releaseAttachment(x);
          return a.filter((x) => !images.includes(x));
        });
      }
    })();
    ref.current?.focus();
  }

  function stop() {
    if (!props.onStop || props.stopping) return;
    setError(undefined);
    void props.onStop().then((failure) => {
      if (failure) setError(failure);
    });
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.nativeEvent.isComposing) return;
    if (open) {
      // The menu has the keys while it is open: Esc closes it (and stops nothing), Enter and
      // Tab pick the highlighted entry or, with none, do nothing: a half-typed `@name` or
      // `/command` is never sent by the Enter meant for the menu.
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        setDismissed(triggerKey);
        return;
      }
      if ((event.key === "Enter" && !event.shiftKey) || event.key === "Tab") {
        if (items.length > 0) {
          event.preventDefault();
          pick(active);
          return;
        }
        if (event.key === "Enter") {
          event.preventDefault();
          return;
        }
      }
      if (items.length > 0 && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
        event.preventDefault();
        const step = event.key === "ArrowDown" ? 1 : -1;
        setActive((i) => (i + step + items.length) % items.length);
        return;
      }
    }
    if (event.key === "Escape") {
      // Esc stops the running turn, as in the terminal; the page does the same outside the box
      if (props.running && props.onStop) {
        event.preventDefault();
        event.stopPropagation();
        stop();
      }
      return;
    }
    if (event.key !== "Enter" || event.shiftKey || event.altKey) return;
    event.preventDefault();
    void send();
  }

  const menu =
    open && trigger ? (
      trigger.kind === "slash" ? (
        <SuggestionMenu
          id={menuId}
          testId="slash-menu"
          itemTestId="slash-item"
          label="Slash commands"
          items={items}
          active={active}
          status={slashCommands.length === 0 ? "The CLI has not announced its commands yet." : "No command matches."}
          onPick={pick}
          onHover={setActive}
        />
      ) : (
        <SuggestionMenu
          id={menuId}
          testId="mention-menu"
          itemTestId="mention-item"
          label="Files in the workspace"
          items={items}
          active={active}
          status={
            !suggestFiles
              ? "File suggestions are not available."
              : files?.error
                ? files.error
                : files?.query === trigger.query
                  ? "No file matches."
                  : "Searching…"
          }
          onPick={pick}
          onHover={setActive}
        />
      )
    ) : null;

  const canSend = !disabled && (draft.trim() !== "" || attachments.some((a) => !inFlight.current.has(a)));
  const stoppable = props.running === true && props.onStop !== undefined;

  return (
    <div className="space-y-1.5">
      {props.queued && props.queued.length > 0 && (
        <QueuedPrompts queued={props.queued} onCancel={disabled ? undefined : props.onCancelQueued} />
      )}
      <div className="relative">
        {menu}
        <div
          onDragOver={(e) => {
            if (disabled || !e.dataTransfer.types.includes("Files")) return;
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(e) => {
            setDragging(false);
            if (disabled) return;
            const dropped = imageFilesOf(e.dataTransfer);
            if (dropped.length === 0) return;
            e.preventDefault();
            void addFiles(dropped);
          }}
          className={`rounded-lg border p-2 shadow-sm focus-within:border-indigo-500 focus-within:ring-2 focus-within:ring-indigo-500/30 ${
            error ? "border-red-400 dark:border-red-700" : "border-zinc-300 dark:border-zinc-700"
          } ${dragging ? "ring-2 ring-indigo-400" : ""} ${disabled ? "bg-zinc-100 dark:bg-zinc-900/50" : "bg-white dark:bg-zinc-900"}`}
        >
          {attachments.length > 0 && (
            <ul aria-label="Attached images" className="mb-2 flex flex-wrap gap-2">
              {attachments.map((a) => (
                <li
                  key={a.key}
                  data-testid="prompt-attachment"
                  data-name={a.name}
                  className="group relative size-16 overflow-hidden rounded-md border border-zinc-200 dark:border-zinc-700"
                >
                  <img src={a.url} alt={a.name} className="size-full object-cover" />
                  <button
                    type="button"
                    data-testid="prompt-attachment-remove"
                    aria-label={`Remove ${a.name}`}
                    onClick={() => remove(a.key)}
                    className="absolute top-0.5 right-0.5 inline-flex size-5 items-center justify-center rounded-full bg-zinc-900/70 text-xs text-white hover:bg-zinc-900 focus-visible:outline-2 focus-visible:outline-indigo-400"
                  >
                    ×
                  </button>
                </li>
              ))}
            </ul>
          )}
          <div className="flex items-end gap-2">
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
              role="combobox"
              aria-autocomplete="list"
              aria-expanded={open && items.length > 0}
              aria-controls={open && items.length > 0 ? menuId : undefined}
              aria-activedescendant={open && items.length > 0 ? `${menuId}-${active}` : undefined}
              onChange={(e) => {
                setDraft(e.target.value);
                setTrigger(
                  e.target.selectionStart === e.target.selectionEnd
                    ? findTrigger(e.target.value, e.target.selectionStart)
                    : undefined,
                );
              }}
              onSelect={syncTrigger}
              onBlur={() => setTrigger(undefined)}
              onKeyDown={onKeyDown}
              onPaste={(e) => {
                const pasted = imageFilesOf(e.clipboardData);
                if (pasted.length === 0) return;
                e.preventDefault();
                void addFiles(pasted);
              }}
              aria-describedby={disabled ? "prompt-disabled-reason" : error ? "prompt-error" : "prompt-hint"}
              aria-invalid={error ? true : undefined}
              placeholder={disabled ? "" : "Ask Claude…"}
              className="max-h-[33vh] min-h-9 flex-1 resize-none bg-transparent px-1.5 py-1.5 text-sm outline-none placeholder:text-zinc-400 disabled:cursor-not-allowed"
            />
            {stoppable && (
              <button
                type="button"
                data-testid="composer-stop"
                aria-keyshortcuts="Escape"
                title="Stop the running turn (Esc)"
                disabled={props.stopping}
                onClick={stop}
                className="inline-flex items-center gap-1.5 rounded-md bg-red-600 px-3 py-1.5 text-sm font-medium text-white shadow-sm hover:bg-red-500 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-red-500 disabled:cursor-progress disabled:opacity-70 dark:bg-red-700 dark:hover:bg-red-600"
              >
                <span aria-hidden className="size-2.5 rounded-[2px] bg-current" />
                {props.stopping ? "Stopping…" : "Stop"}
              </button>
            )}
            {/* while a turn runs, Send shows only with something to send (it joins the turn's queue) */}
            {(!stoppable || canSend) && (
              <button
                type="button"
                data-testid="prompt-send"
                className="btn py-1.5"
                disabled={!canSend}
                title={stoppable ? "Send now: the CLI takes it in when the running turn lets it" : undefined}
                onClick={() => void send()}
              >
                Send
              </button>
            )}
          </div>
        </div>
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
            {stoppable && (
              <>
                <kbd className="font-sans">Esc</kbd> stops ·{" "}
              </>
            )}
            <kbd className="font-sans">Enter</kbd> sends · <kbd className="font-sans">Shift</kbd>+
            <kbd className="font-sans">Enter</kbd> new line · <kbd className="font-sans">/</kbd> commands ·{" "}
            <kbd className="font-sans">@</kbd> files · paste or drop images
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
});

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
