"use client";

/**
 * Stop within reach while a turn runs: the page's Esc (outside the prompt box, which handles its
 * own), the stop's state shared by every Stop on the page, and the compact bar that stays at the
 * top of the screen once the session header has scrolled away (title, status, Stop).
 */
import { useCallback, useEffect, useRef, useState, type ReactNode, type RefObject } from "react";

/**
 * One stop for the page: every Stop (header, composer, Esc) shares whether it is under way, so
 * a second press while the first is answered does nothing.
 */
export function useStopTurn(interrupt: () => Promise<string | undefined>) {
  const [stopping, setStopping] = useState(false);
  const busy = useRef(false);
  const stop = useCallback(async (): Promise<string | undefined> => {
    if (busy.current) return undefined;
    busy.current = true;
    setStopping(true);
    try {
      return await interrupt();
    } finally {
      busy.current = false;
      setStopping(false);
    }
  }, [interrupt]);
  return { stop, stopping };
}

/**
 * Something on the page has the Esc key for itself now: a dialog, a menu or listbox, the Files
 * pane (Esc closes it), an editor, a field.
 */
export function escapeBelongsElsewhere(target: EventTarget | null, doc: Document = document): boolean {
  const owners = 'dialog[open], [role="dialog"], [role="alertdialog"], [aria-modal="true"], [role="menu"], [role="listbox"], #files-drawer';
  if (doc.querySelector(owners)) return true;
  const el = target instanceof Element ? target : null;
  if (!el) return false;
  if (el.closest(".monaco-editor, [contenteditable=''], [contenteditable='true']")) return true;
  // a field (other than the prompt box, which stops by itself) or an open select keeps its Esc
  const tag = el.tagName;
  return tag === "INPUT" || tag === "SELECT" || (tag === "TEXTAREA" && el.id !== "prompt-input");
}

/**
 * Esc anywhere on the page stops the running turn, unless a dialog, a menu or a field has it
 * (they either handle it or expect it to close them), or it was handled already.
 */
export function usePageEscapeStops(enabled: boolean, stop: () => Promise<string | undefined>) {
  useEffect(() => {
    if (!enabled) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key !== "Escape" || event.defaultPrevented || event.isComposing) return;
      if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      if (escapeBelongsElsewhere(event.target)) return;
      event.preventDefault();
      void stop();
    };
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, [enabled, stop]);
}

/** Whether the element is scrolled above the top of the screen. */
export function useScrolledAway(ref: RefObject<HTMLElement | null>): boolean {
  const [away, setAway] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof IntersectionObserver === "undefined") return;
    const observer = new IntersectionObserver(([entry]) => {
      if (entry) setAway(!entry.isIntersecting && entry.boundingClientRect.bottom <= 0);
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref]);
  return away;
}

/**
 * The session header, compact, fixed at the top while the real one is scrolled away: the
 * session's name and status, and Stop while a turn runs. Out of the page's flow, so showing
 * it moves nothing.
 */
export function StickySessionBar({
  shown,
  title,
  status,
  running,
  canStop,
  stopping,
  onStop,
}: {
  shown: boolean;
  title: string;
  status: ReactNode;
  running: boolean;
  canStop: boolean;
  stopping: boolean;
  onStop: () => void;
}) {
  if (!shown) return null;
  return (
    <div
      data-testid="session-sticky-bar"
      className="fixed inset-x-0 top-0 z-30 border-b border-zinc-200 bg-white/95 shadow-sm backdrop-blur dark:border-zinc-800 dark:bg-zinc-900/95"
    >
      <div className="mx-auto flex max-w-5xl min-w-0 items-center gap-2 px-3 py-1.5 sm:px-6">
        <button
          type="button"
          className="min-w-0 truncate text-left text-sm font-semibold hover:underline"
          title="Back to the top of the session"
          onClick={() => window.scrollTo({ top: 0, behavior: "smooth" })}
        >
          {title}
        </button>
        <span className="inline-flex shrink-0">{status}</span>
        {running && canStop && (
          <button
            type="button"
            data-testid="sticky-stop"
            aria-keyshortcuts="Escape"
            title="Stop the running turn (Esc)"
            disabled={stopping}
            onClick={onStop}
            className="ml-auto inline-flex shrink-0 items-center gap-1.5 rounded-md bg-red-600 px-2.5 py-1 text-xs font-medium text-white hover:bg-red-500 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-red-500 disabled:opacity-70 dark:bg-red-700"
          >
            <span aria-hidden className="size-2 rounded-[2px] bg-current" />
            {stopping ? "Stopping…" : "Stop"}
          </button>
        )}
      </div>
    </div>
  );
}
