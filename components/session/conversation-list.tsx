"use client";

/**
 * The conversation, virtualized by chunks on the window's scroll: rows are grouped in chunks of
 * {@link chunkRows} by their place in the session (a chunk keeps its rows when an earlier page
 * arrives above it), and only the chunks near the screen are drawn. The others stand in as empty
 * blocks of their last measured height, so the page keeps its length and the scrollbar its place.
 *
 * Scrolling itself does no React work. An IntersectionObserver says when a block comes within
 * {@link nearMargin} of the screen (it is drawn: the nearest first, about {@link rowsPerFrame}
 * rows a frame) and when a drawn chunk is beyond {@link farMargin} (it goes back to a block).
 * Each row keeps its place, so its chunk, whatever changes around it ({@link placesOf}). What is
 * on screen stays where it is while chunks above it change ({@link KeepScreen}).
 *
 * It follows the stream while the reader is at the bottom of the page and leaves them alone once
 * they scroll up (then "Jump to latest" brings them back). Near the top it reads the earlier page
 * (`pages.load`).
 */
import { Component, createRef, memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from "react";
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

/** Rows per chunk: what is drawn or dropped at once. */
export const chunkRows = 8;
/** Rows drawn when the page opens (the last ones): the last screen, and a short session whole. */
const openingRows = 40;
/** Rows drawn per frame while chunks come near the screen (at least one chunk). */
const rowsPerFrame = 16;
/** A block within this distance of the screen is drawn (the browser's rootMargin, in screens). */
const nearMargin = "150% 0px";
/** A drawn chunk beyond this distance is dropped (larger than {@link nearMargin}, so a chunk does not flicker). */
const farMargin = "400% 0px";
/** A row's height before any was measured (px). */
const rowHeightGuess = 64;
/** Rows the reader can be below the end by and still count as at the bottom (px). */
const bottomSlack = 120;
/** The first row's place when the page opens: earlier rows count down from it, and it stays positive. */
const firstPlace = 10_000_000;

function atPageBottom(): boolean {
  return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - bottomSlack;
}

function scrollToPageBottom(): void {
  window.scrollTo({ top: document.documentElement.scrollHeight });
}

/**
 * Each row's place, kept from `before` (the last rows' places by key) so that a row stays in its
 * chunk whatever changes around it: rows read above count down from the first known row, rows
 * added below count up from the row before them, and a row gone (a notice replaced by the tool it
 * answered) leaves a gap rather than moving every row after it. Places never go down along the
 * rows (a new row between two known ones shares the place of the row before it, if it must); if
 * the known rows are no longer in order, every row is placed again from the first one's place.
 */
export function placesOf(rows: readonly ConversationRow[], before: ReadonlyMap<string, number>, start = firstPlace): number[] {
  const places: (number | undefined)[] = rows.map((row) => before.get(row.key));
  const firstKnown = places.findIndex((p) => p !== undefined);
  let last = -Infinity;
  for (const p of places) {
    if (p === undefined) continue;
    if (p < last) {
      // out of order: start again from the first row's old place
      const from = places[0] ?? places[firstKnown]! - firstKnown;
      return rows.map((_, i) => from + i);
    }
    last = p;
  }
  if (firstKnown < 0) return rows.map((_, i) => start + i);
  const out = new Array<number>(rows.length);
  for (let i = 0; i < firstKnown; i++) out[i] = places[firstKnown]! - (firstKnown - i);
  let nextKnown = firstKnown;
  for (let i = firstKnown; i < rows.length; i++) {
    const known = places[i];
    if (known !== undefined) {
      out[i] = known;
      continue;
    }
    if (nextKnown <= i) {
      nextKnown = i + 1;
      while (nextKnown < rows.length && places[nextKnown] === undefined) nextKnown++;
    }
    out[i] = Math.min(out[i - 1]! + 1, places[nextKnown] ?? Infinity);
  }
  return out;
}

/** `rows` with their places ({@link placesOf}), and the places by key for the next rows. */
function placeRows(rows: readonly ConversationRow[], before: ReadonlyMap<string, number>) {
  const places = placesOf(rows, before);
  return { rows, places, byKey: new Map(rows.map((row, i) => [row.key, places[i]!])) };
}

export interface Chunk {
  /** Its place: its rows' places divided by {@link chunkRows}. */
  id: number;
  rows: readonly ConversationRow[];
}

/** The rows in chunks by their places ({@link placesOf}). */
export function chunksOf(rows: readonly ConversationRow[], places: readonly number[]): Chunk[] {
  const chunks: Chunk[] = [];
  let current: { id: number; rows: ConversationRow[] } | undefined;
  rows.forEach((row, i) => {
    const id = Math.floor(places[i]! / chunkRows);
    if (current?.id !== id) chunks.push((current = { id, rows: [] }));
    current.rows.push(row);
  });
  return chunks;
}

/**
 * The chunks to draw next: those near the screen and not drawn yet, nearest first, until about
 * `budget` rows (at least one chunk).
 */
export function nextToDraw(near: ReadonlyMap<number, number>, drawn: (id: number) => boolean, rowsOf: (id: number) => number, budget: number): number[] {
  const waiting = [...near].filter(([id]) => !drawn(id)).sort((a, b) => a[1] - b[1]);
  const picked: number[] = [];
  let rows = 0;
  for (const [id] of waiting) {
    if (picked.length > 0 && rows + rowsOf(id) > budget) break;
    picked.push(id);
    rows += rowsOf(id);
  }
  return picked;
}

/** How far a box is from the screen (px; 0 when on it). */
function distanceFromScreen(rect: DOMRectReadOnly, screenHeight: number): number {
  return Math.max(0, rect.top - screenHeight, -rect.bottom);
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
   * Drawn after the rows: the text still streaming. It changes with every delta, so it stays out
   * of the chunks; the page follows its growth like any other.
   */
  tail?: ReactNode;
}) {
  const listRef = useRef<HTMLDivElement>(null);
  // Each row's place (its chunk), worked out again while rendering when the rows change (React's
  // "state from props" pattern), so the chunks keep their rows in the render that changed them.
  const [placed, setPlaced] = useState(() => placeRows(rows, new Map()));
  if (placed.rows !== rows) setPlaced(placeRows(rows, placed.byKey));
  const chunks = useMemo(() => chunksOf(placed.rows, placed.places), [placed]);
  const lastChunk = chunks.at(-1)?.id ?? 0;
  const rowsOf = useRef(new Map<number, number>());
  rowsOf.current = useMemo(() => new Map(chunks.map((c) => [c.id, c.rows.length])), [chunks]);

  // Which chunks are drawn: those the observers brought near, and always the last ones (what the
  // page opens on, and where new rows arrive). A chunk that leaves the last ones as rows arrive
  // stays drawn until it is far: it may be on screen, and no observer would see it change.
  const alwaysFrom = lastChunk - Math.ceil(openingRows / chunkRows) + 1;
  const [drawn, setDrawn] = useState<ReadonlySet<number>>(() => new Set());
  const [drawnUntil, setDrawnUntil] = useState(alwaysFrom);
  if (alwaysFrom > drawnUntil) {
    setDrawnUntil(alwaysFrom);
    setDrawn((before) => {
      const after = new Set(before);
      for (let id = drawnUntil; id < alwaysFrom; id++) after.add(id);
      return after;
    });
  }
  const isDrawn = (id: number) => id >= alwaysFrom || drawn.has(id);

  // Heights: each drawn chunk's, measured (with its row count then); a block never drawn keeps
  // the guess it was first given (its rows times the mean measured row), so blocks do not all
  // change height, and render again, whenever a chunk is measured.
  const heights = useRef(new Map<number, { px: number; rows: number }>());
  const guesses = useRef(new Map<number, { px: number; rows: number }>());
  const meanRow = useRef({ px: 0, rows: 0 });
  const blockHeight = (chunk: Chunk) => {
    const mean = meanRow.current.rows > 0 ? meanRow.current.px / meanRow.current.rows : rowHeightGuess;
    let known = heights.current.get(chunk.id) ?? guesses.current.get(chunk.id);
    if (!known) guesses.current.set(chunk.id, (known = { px: chunk.rows.length * mean, rows: chunk.rows.length }));
    return Math.max(0, Math.round(known.px + (chunk.rows.length - known.rows) * mean));
  };

  // What the observers saw: blocks within nearMargin (with their distance from the screen then)
  // and chunks reported beyond farMargin. `pump` reads them once a frame.
  const near = useRef(new Map<number, number>());
  const farOut = useRef(new Set<number>());
  const alwaysFromRef = useRef(alwaysFrom);
  alwaysFromRef.current = alwaysFrom;
  const pumpFrame = useRef(0);
  const pump = useCallback(() => {
    if (pumpFrame.current) return;
    pumpFrame.current = requestAnimationFrame(() => {
      pumpFrame.current = 0;
      setDrawn((before) => {
        const shown = (id: number) => id >= alwaysFromRef.current || before.has(id);
        const add = nextToDraw(near.current, shown, (id) => rowsOf.current.get(id) ?? chunkRows, rowsPerFrame);
        const drop = [...before].filter((id) => !rowsOf.current.has(id) || (farOut.current.has(id) && !near.current.has(id)));
        if (add.length === 0 && drop.length === 0) return before;
        const after = new Set(before);
        for (const id of drop) after.delete(id);
        for (const id of add) after.add(id);
        return after;
      });
    });
  }, []);
  // After each change of what is drawn, draw on while blocks wait near the screen.
  useEffect(() => {
    for (const id of near.current.keys()) {
      if (!(id >= alwaysFrom || drawn.has(id)) && rowsOf.current.has(id)) {
        pump();
        return;
      }
    }
  }, [drawn, alwaysFrom, pump]);

  // The observers, made when the first element is tracked (in the commit that adds it) and
  // disconnected when the list goes (React's strict mode runs that once more in development: the
  // chunks already in the page are then tracked again).
  const observers = useRef<{ near: IntersectionObserver; far: IntersectionObserver; size: ResizeObserver }>(undefined);
  const observe = useCallback((): NonNullable<typeof observers.current> => {
    if (observers.current) return observers.current;
    const idOf = (el: Element) => Number((el as HTMLElement).dataset.chunk);
    const nearObserver = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          const id = idOf(entry.target);
          if (entry.isIntersecting) near.current.set(id, distanceFromScreen(entry.boundingClientRect, window.innerHeight));
          else near.current.delete(id);
        }
        pump();
      },
      { rootMargin: nearMargin },
    );
    const farObserver = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          const id = idOf(entry.target);
          if (entry.isIntersecting) farOut.current.delete(id);
          else farOut.current.add(id);
        }
        pump();
      },
      { rootMargin: farMargin },
    );
    const size = new ResizeObserver((entries) => {
      for (const entry of entries) {
        const el = entry.target as HTMLElement;
        if (el.dataset.drawn !== "true") continue;
        const rows = Number(el.dataset.rows);
        const px = entry.borderBoxSize[0]?.blockSize ?? el.offsetHeight;
        const id = idOf(el);
        const old = heights.current.get(id);
        if (old) {
          meanRow.current.px -= old.px;
          meanRow.current.rows -= old.rows;
        }
        heights.current.set(id, { px, rows });
        meanRow.current.px += px;
        meanRow.current.rows += rows;
      }
    });
    return (observers.current = { near: nearObserver, far: farObserver, size });
  }, [pump]);
  /** Watches a chunk's element while it is in the page. */
  const track = useCallback(
    (el: HTMLElement | null) => {
      if (!el || typeof IntersectionObserver === "undefined") return;
      const o = observe();
      o.near.observe(el);
      o.far.observe(el);
      o.size.observe(el);
      return () => {
        const id = Number(el.dataset.chunk);
        near.current.delete(id);
        farOut.current.delete(id);
        const now = observers.current;
        now?.near.unobserve(el);
        now?.far.unobserve(el);
        now?.size.unobserve(el);
      };
    },
    [observe],
  );

  useEffect(() => {
    if (!observers.current) for (const el of listRef.current?.querySelectorAll<HTMLElement>("[data-chunk]") ?? []) track(el);
    return () => {
      const o = observers.current;
      observers.current = undefined;
      o?.near.disconnect();
      o?.far.disconnect();
      o?.size.disconnect();
      cancelAnimationFrame(pumpFrame.current);
      pumpFrame.current = 0;
    };
  }, [track]);

  // Following: true while the reader is at the bottom; every change of size then scrolls down.
  const stick = useRef(true);
  const [away, setAway] = useState(false);
  /** A check of the scroll position is queued for after this frame. */
  const checking = useRef(false);

  useEffect(() => {
    let lastY = window.scrollY;
    let lastHeight = document.documentElement.scrollHeight;
    let userAt = -Infinity;
    // What lets go of the bottom: a scroll up soon after the reader's own input (wheel, keys,
    // touch, the scrollbar), or a long jump up while the page kept its height (a focus or find
    // scrolling something into view). Chunks drawn above the screen change the page's height and
    // may move it without input: that keeps following.
    const onInput = (event: Event) => {
      if (!isScrollIntent(event)) return;
      userAt = performance.now();
    };
    // Where the page is, read once per frame after the frame's own layout, not inside the scroll
    // event (which would force a layout of whatever changed). While a check waits, growth is not
    // followed (the reader may have just scrolled up); the check follows what grew meanwhile if
    // the reader is still following.
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

  // Chunks drawn and streamed text grow the page, and so do what the page shows below the list (an
  // approval card, whose diff grows as it loads; the background tasks above the prompt box):
  // follow any growth.
  useEffect(() => {
    const target = listRef.current;
    if (!target || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => {
      if (stick.current && !checking.current) scrollToPageBottom();
    });
    observer.observe(target);
    observer.observe(document.body);
    return () => observer.disconnect();
  }, []);
  useLayoutEffect(() => {
    if (stick.current && !checking.current) scrollToPageBottom();
  }, [rows]);

  /** The screen is kept where it is when the list changes, unless the list follows its end. */
  const keepScreen = useCallback(() => !stick.current, []);

  const jump = useCallback(() => {
    stick.current = true;
    setAway(false);
    scrollToPageBottom();
  }, []);

  const { more, loading, error, load } = pages;
  // The earlier page is read while the top of the list is near the screen: when it comes near
  // (the header's own observer), and again after each page while it still is (a page that drew
  // little, or nothing at all: a long stream of events that draw nothing). `load` changes with
  // each page read; the header's place is read then, once per page.
  const [headerSeen, setHeaderSeen] = useState(0);
  useEffect(() => {
    if (!more || loading || error) return;
    const header = listRef.current?.querySelector('[data-testid="conversation-earlier"]');
    if (rows.length === 0 || (header && header.getBoundingClientRect().bottom > -window.innerHeight * 1.5)) load();
  }, [rows.length, more, loading, error, load, headerSeen]);
  const trackHeader = useCallback((el: HTMLElement | null) => {
    if (!el || typeof IntersectionObserver === "undefined") return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) setHeaderSeen((n) => n + 1);
    }, { rootMargin: nearMargin });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  return (
    <div ref={listRef} className="relative">
      {more || error ? (
        <div
          ref={trackHeader}
          data-testid="conversation-earlier"
          data-state={error ? "error" : loading ? "loading" : "more"}
          className="flex min-h-9 items-center justify-center text-center text-xs text-zinc-500 [overflow-anchor:none]"
        >
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
        <div data-testid="conversation-start" className="h-1 [overflow-anchor:none]" />
      )}
      <KeepScreen keep={keepScreen} streaming={streaming}>
        {chunks.map((chunk) => (
          <ChunkView
            key={chunk.id}
            chunk={chunk}
            drawn={isDrawn(chunk.id)}
            height={isDrawn(chunk.id) ? 0 : blockHeight(chunk)}
            quiet={chunk.id < alwaysFrom}
            track={track}
          />
        ))}
      </KeepScreen>
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

/** Where a chunk on screen was before the list changed. */
interface ScreenAnchor {
  el: Element;
  top: number;
}

/**
 * The chunk that stands for what is on screen: the first drawn chunk on screen, else the first
 * chunk on screen (a block). Its top moves only when something above it changes height.
 */
function screenAnchor(list: HTMLElement): ScreenAnchor | null {
  const chunks = list.children;
  // the first chunk whose bottom is below the screen's top (chunks are in page order)
  let lo = 0;
  let hi = chunks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (chunks[mid]!.getBoundingClientRect().bottom > 0) hi = mid;
    else lo = mid + 1;
  }
  const first = chunks[lo];
  if (!first) return null;
  for (let i = lo; i < chunks.length; i++) {
    const el = chunks[i]!;
    const rect = el.getBoundingClientRect();
    if (rect.top >= window.innerHeight) break;
    if ((el as HTMLElement).dataset.drawn === "true") return { el, top: rect.top };
  }
  return { el: first, top: first.getBoundingClientRect().top };
}

/**
 * The list element, keeping what is on screen in place when its chunks change (unless `keep`
 * says the list follows its end): where the anchor chunk is is read right before React changes
 * the DOM and put back right after. The browser's own scroll anchoring does this for most
 * changes, but not when a block is drawn (its `overflow-anchor` changes, which suspends the
 * browser's anchoring for that layout) nor at the page's very top; when it did, the anchor has
 * not moved and nothing is done.
 */
class KeepScreen extends Component<{ keep: () => boolean; streaming: boolean; children: ReactNode }> {
  private list = createRef<HTMLDivElement>();

  override getSnapshotBeforeUpdate(): ScreenAnchor | null {
    const list = this.list.current;
    return list && this.props.keep() ? screenAnchor(list) : null;
  }

  override componentDidUpdate(_props: unknown, _state: unknown, anchor: ScreenAnchor | null): void {
    if (!anchor || !anchor.el.isConnected) return;
    const moved = anchor.el.getBoundingClientRect().top - anchor.top;
    if (Math.abs(moved) >= 0.5) window.scrollBy(0, moved);
  }

  override render() {
    return (
      // New messages are read out once they have finished streaming (the last chunks only: see ChunkView's `quiet`).
      <div ref={this.list} role="list" aria-label="Conversation" aria-live="polite" aria-relevant="additions text" aria-busy={this.props.streaming}>
        {this.props.children}
      </div>
    );
  }
}

/** Whether two chunks draw the same: the same rows ({@link sameRow}), in order. */
function sameChunk(a: Chunk, b: Chunk): boolean {
  return a === b || (a.id === b.id && a.rows.length === b.rows.length && a.rows.every((row, i) => sameRow(row, b.rows[i]!)));
}

/**
 * A chunk: its rows when drawn, else an empty block of its height. A block is never the browser's
 * scroll anchor: its height is a guess until drawn, and an anchor's own change of height moves
 * what follows it (the rows on screen).
 */
const ChunkView = memo(
  function ChunkView({
    chunk,
    drawn,
    height,
    quiet,
    track,
  }: {
    chunk: Chunk;
    drawn: boolean;
    height: number;
    /** Not one of the last chunks: rows drawn in it as the reader scrolls are not read out as new. */
    quiet: boolean;
    track: (el: HTMLElement | null) => (() => void) | undefined;
  }) {
    return (
      <div
        ref={track}
        data-chunk={chunk.id}
        data-drawn={drawn}
        data-rows={chunk.rows.length}
        aria-live={quiet ? "off" : undefined}
        style={drawn ? { willChange: "transform" } : { height, overflowAnchor: "none" }}
      >
        {drawn &&
          chunk.rows.map((row) => (
            <div key={row.key} role="listitem" className="pb-3">
              <RowContent row={row} />
            </div>
          ))}
      </div>
    );
  },
  (before, after) =>
    before.drawn === after.drawn && before.height === after.height && before.quiet === after.quiet && before.track === after.track && sameChunk(before.chunk, after.chunk),
);

/** One row's content, drawn again only when it draws something else ({@link sameRow}). */
const RowContent = memo(
  function RowContent({ row }: { row: ConversationRow }) {
    return row.render();
  },
  (before, after) => sameRow(before.row, after.row),
);
