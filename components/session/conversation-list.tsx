"use client";

/**
 * The conversation, virtualized (react-virtuoso on the window's scroll): only the rows near the
 * screen are in the DOM, whatever the session's length. It follows the stream while the reader
 * is at the bottom of the page and leaves them alone once they scroll up (then "Jump to latest"
 * brings them back). Scrolling to the top reads the earlier page (`pages.load`); the rows it
 * adds go above without moving what is on screen (`firstItemIndex` counts down by the rows that
 * appeared before the old first one).
 */
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type ReactNode, type Ref } from "react";
import { Virtuoso, type Components } from "react-virtuoso";
import type { EarlierPages } from "./conversation-pages";
import { isScrollIntent } from "./scroll-intent";

/** A row of the list: its stable key (a conversation item's) and how to draw it. */
export interface ConversationRow {
  key: string;
  render: () => ReactNode;
  /**
   * Everything `render` draws from (the item, the callbacks it passes on). A new row object whose
   * deps are the same values (===) as the last one's is not drawn again; without deps, a row is
   * drawn again whenever its object changes.
   */
  deps?: readonly unknown[];
}

/** Whether `b` draws what `a` drew: the same row, or the same key and the same deps. */
export function sameRow(a: ConversationRow, b: ConversationRow): boolean {
  if (a === b) return true;
  if (a.key !== b.key || !a.deps || !b.deps || a.deps.length !== b.deps.length) return false;
  return a.deps.every((d, i) => Object.is(d, b.deps![i]));
}

/**
 * Rows kept in the DOM beyond the screen (px, each side): less while the page opens, so the last
 * screen draws first, then enough that a short conversation is there whole and scrolling mounts
 * rows before they come into view.
 */
const overscanOpening = 400;
const overscan = 2400;
/** A row's height before it is measured (px): the list skips its one-row probe render. */
const rowHeightGuess = 64;
/** Rows the reader can be below the end by and still count as at the bottom (px). */
const bottomSlack = 120;
/** Virtuoso needs a positive first index that only counts down: room for this many earlier rows. */
const firstIndexStart = 10_000_000;
/** How many of the old first rows are looked for when rows change, to find how many were added above. */
const anchorKeys = 32;

function atPageBottom(): boolean {
  return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - bottomSlack;
}

function scrollToPageBottom(): void {
  window.scrollTo({ top: document.documentElement.scrollHeight });
}

/** The rows added above the old first rows: the first old key still present, its new index minus its old one. */
export function rowsAddedAbove(oldKeys: readonly string[], rows: readonly ConversationRow[]): number {
  if (oldKeys.length === 0) return 0;
  const index = new Map<string, number>();
  const limit = Math.min(rows.length, 100_000);
  for (let i = 0; i < limit; i++) index.set(rows[i]!.key, i);
  for (let old = 0; old < oldKeys.length; old++) {
    const now = index.get(oldKeys[old]!);
    if (now !== undefined) return Math.max(0, now - old);
  }
  return 0;
}

export function ConversationList({
  rows,
  streaming,
  pages,
  tail,
}: {
  rows: readonly ConversationRow[];
  /** Text is streaming (the list is `aria-busy`). */
  streaming: boolean;
  pages: EarlierPages;
  /**
   * Drawn after the rows, outside the virtualized list: the text still streaming. It changes
   * with every delta, so it is plain React rather than a row Virtuoso must re-measure; the
   * page follows its growth like any other.
   */
  tail?: ReactNode;
}) {
  // Adjusted while rendering (React's "state from props" pattern), so Virtuoso sees the new
  // first index together with the rows that caused it.
  const [anchor, setAnchor] = useState(() => ({ keys: rows.slice(0, anchorKeys).map((r) => r.key), first: firstIndexStart }));
  if (anchor.keys[0] !== rows[0]?.key) {
    const added = rowsAddedAbove(anchor.keys, rows);
    setAnchor({ keys: rows.slice(0, anchorKeys).map((r) => r.key), first: Math.max(1, anchor.first - added) });
  }

  // Following: true while the reader is at the bottom; every change of size then scrolls down.
  const stick = useRef(true);
  const [away, setAway] = useState(false);
  const listRef = useRef<HTMLDivElement>(null);
  /** A check of the scroll position is queued for after this frame. */
  const checking = useRef(false);

  useEffect(() => {
    let lastY = window.scrollY;
    let lastHeight = document.documentElement.scrollHeight;
    let userAt = -Infinity;
    // What lets go of the bottom: a scroll up soon after the reader's own input (wheel, keys,
    // touch, the scrollbar), or a long jump up while the page kept its height (a focus or find
    // scrolling something into view). The list correcting its row measurements moves the page up
    // without input, by a little or (while it opens, as rows above are measured) by more than half
    // a screen, and changes the page's height as it does: that keeps following.
    const onInput = (event: Event) => {
      if (!isScrollIntent(event)) return;
      userAt = performance.now();
    };
    // Where the page is, read once per frame after the frame's own layout: reading the scroll
    // position inside the scroll event forced a layout of the rows Virtuoso had just changed
    // (it renders synchronously in its own scroll listener), then the frame laid them out again.
    // While a check waits, growth is not followed (the reader may have just scrolled up); the
    // check follows what grew meanwhile if the reader is still following.
    const check = () => {
      checking.current = false;
      const y = window.scrollY;
      const height = document.documentElement.scrollHeight;
      if (atPageBottom()) stick.current = true;
      else if (y < lastY && (performance.now() - userAt < 1000 || (lastY - y > window.innerHeight / 2 && height === lastHeight))) stick.current = false;
      else if (stick.current) scrollToPageBottom();
      lastY = y;
      lastHeight = height;
      setAway(!stick.current);
    };
    let frame = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onScroll = () => {
      if (checking.current) return;
      checking.current = true;
      frame = requestAnimationFrame(() => {
        timer = setTimeout(check, 0);
      });
    };
    const inputs = ["wheel", "keydown", "touchmove", "pointerdown"] as const;
    for (const name of inputs) window.addEventListener(name, onInput, { passive: true, capture: true });
    window.addEventListener("scroll", onScroll, { passive: true });
    return () => {
      for (const name of inputs) window.removeEventListener(name, onInput, { capture: true });
      window.removeEventListener("scroll", onScroll);
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, []);

  // Rows are measured after they render, and streamed text grows the last one: follow any growth.
  useEffect(() => {
    const target = listRef.current;
    if (!target || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => {
      if (stick.current && !checking.current) scrollToPageBottom();
    });
    observer.observe(target);
    return () => observer.disconnect();
  }, []);
  useLayoutEffect(() => {
    if (stick.current && !checking.current) scrollToPageBottom();
  }, [rows]);

  const jump = useCallback(() => {
    stick.current = true;
    setAway(false);
    scrollToPageBottom();
  }, []);

  // The full overscan once the opening screen has painted and the page is idle.
  const [opened, setOpened] = useState(false);
  useEffect(() => {
    const open = () => setOpened(true);
    if (typeof requestIdleCallback === "function") {
      const idle = requestIdleCallback(open, { timeout: 1000 });
      return () => cancelIdleCallback(idle);
    }
    const timer = setTimeout(open, 200);
    return () => clearTimeout(timer);
  }, []);

  const { more, loading, error, load } = pages;
  // A tail with nothing to show (the middle of a long turn's stream) reads on at once.
  useEffect(() => {
    if (rows.length === 0 && more && !loading && !error) load();
  }, [rows.length, more, loading, error, load]);
  // So does a page that drew nothing new while the top is on screen (a long stream of events that
  // draw nothing): Virtuoso's startReached fires only when the first row changes, so without this
  // the reader would scroll against the top forever. \`load\` changes with each page read.
  useEffect(() => {
    if (!more || loading || error) return;
    const header = listRef.current?.querySelector('[data-testid="conversation-earlier"]');
    if (header && header.getBoundingClientRect().bottom > -400) load();
  }, [more, loading, error, load]);
  const Header = useCallback(
    () =>
      more || error ? (
        <div data-testid="conversation-earlier" data-state={error ? "error" : loading ? "loading" : "more"} className="py-2 text-center text-xs text-zinc-500">
          {error ? (
            <span role="alert">
              Could not load earlier messages: {error}{" "}
              <button type="button" className="font-medium underline" onClick={load}>
                Retry
              </button>
            </span>
          ) : loading ? (
            <span role="status">Loading earlier messages…</span>
          ) : (
            <button type="button" className="hover:underline" onClick={load}>
              Load earlier messages
            </button>
          )}
        </div>
      ) : (
        <div data-testid="conversation-start" className="h-1" />
      ),
    [more, loading, error, load],
  );
  // Virtuoso republishes each prop whose identity changes, and a new `components` or
  // `increaseViewportBy` makes it work out its list again: every prop keeps its identity
  // between renders unless its value changed.
  const startReached = useCallback(() => {
    if (more && !error) load();
  }, [more, error, load]);
  const components = useMemo(
    () => ({ List: ConversationOl, Item: ConversationLi, Header }) as Components<ConversationRow, ListContext>,
    [Header],
  );
  const context = useMemo(() => ({ streaming }), [streaming]);
  const viewport = opened ? viewportOpened : viewportOpening;

  // The same element while its props are the same: the streamed tail below changes with every
  // delta, and each render of Virtuoso republishes all its props and works out its range again.
  const list = useMemo(
    () => (
      <Virtuoso
        useWindowScroll
        data={rows}
        firstItemIndex={anchor.first}
        initialTopMostItemIndex={{ index: "LAST", align: "end" }}
        computeItemKey={rowKey}
        itemContent={rowContent}
        startReached={startReached}
        increaseViewportBy={viewport}
        defaultItemHeight={rowHeightGuess}
        // Rows are measured in the ResizeObserver's own callback, right after the layout that sized
        // them, rather than in the next frame's rAF, where the measurement forced a second layout
        // of whatever the frame had changed meanwhile. (Its cost: the browser may log a benign
        // "ResizeObserver loop" message when a row changes size while being measured.)
        skipAnimationFrameInResizeObserver
        context={context}
        components={components}
      />
    ),
    [rows, anchor.first, startReached, viewport, context, components],
  );

  return (
    <div ref={listRef} className="relative">
      {list}
      {tail}
      {away && (
        <button
          type="button"
          data-testid="jump-to-latest"
          onClick={jump}
          className="fixed bottom-44 left-1/2 z-20 -translate-x-1/2 rounded-full bg-indigo-600 px-3 py-1 text-xs font-medium text-white shadow-lg hover:bg-indigo-500 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-500"
        >
          Jump to latest ↓
        </button>
      )}
    </div>
  );
}

/**
 * One row's content, drawn again only when it draws something else ({@link sameRow}). Virtuoso
 * calls `itemContent` for every row in its range whenever the range moves (each step of a
 * scroll): without this each step would render every row near the screen again, not only the
 * ones coming into range, and each page read or event would render every row again.
 */
const RowContent = memo(
  function RowContent({ row }: { row: ConversationRow }) {
    return row.render();
  },
  (before, after) => sameRow(before.row, after.row),
);

const rowContent = (_index: number, row: ConversationRow) => <RowContent row={row} />;
const rowKey = (_index: number, row: ConversationRow) => row.key;
const viewportOpening = { top: overscanOpening, bottom: overscanOpening };
const viewportOpened = { top: overscan, bottom: overscan };

interface ListContext {
  streaming: boolean;
}

/** The list element: new messages are read out once they have finished streaming. */
const ConversationOl: Components<ConversationRow, ListContext>["List"] = ({ style, children, context, ref, ...rest }) => (
  <ol
    {...rest}
    ref={ref as Ref<HTMLOListElement>}
    style={style}
    aria-label="Conversation"
    aria-live="polite"
    aria-relevant="additions text"
    aria-busy={context?.streaming ?? false}
  >
    {children}
  </ol>
);

/** One row; the gap between rows is padding inside it, so Virtuoso measures it with the row. */
const ConversationLi: Components<ConversationRow, ListContext>["Item"] = ({ children, context: _context, item: _item, ...rest }) => (
  <li {...rest} className="pb-3">
    {children}
  </li>
);
