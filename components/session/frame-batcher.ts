/**
 * Collects what arrives between two frames and hands it over once, just before the next frame
 * draws. A streamed reply comes as one socket message per text delta, often several per frame;
 * applying each on its own rendered the session view (and its Markdown) once per message, on the
 * cores the CLI needs, when only the last render of each frame can reach the screen.
 *
 * After each item it keeps the page's frames coming for a while (`warmFrameMs`), each frame a
 * no-op unless something arrived: a page that asks for no frames lets Chromium stop its frame
 * pipeline, and the frame after a quiet spell (a reply's first delta) then took ~2.5 ms longer
 * to reach the screen (docs/PERFORMANCE.md §3w). A page that got nothing for that long goes
 * quiet again.
 *
 * A hidden tab runs no frames, and throttles timers (to one a minute after a while): there each
 * item is handed over as it comes, as before batching. A timer covers a frame that does not come
 * while the tab looks visible.
 */
export interface FrameBatcher<T> {
  push(item: T): void;
  /** Hands over what is held now (before something that must follow it, such as a snapshot). */
  flush(): void;
  /** Drops what is held and stops; later pushes are ignored. */
  cancel(): void;
}

export interface FrameScheduler {
  requestFrame(run: () => void): number;
  cancelFrame(handle: number): void;
  setTimer(run: () => void, ms: number): ReturnType<typeof setTimeout>;
  clearTimer(handle: ReturnType<typeof setTimeout>): void;
  /** The page draws no frames now (a hidden tab). */
  hidden(): boolean;
  /** Milliseconds on a monotonic clock. */
  now(): number;
}

/** The longest a batch waits when no frame comes, ms. */
export const batchTimeoutMs = 100;

/** How long the frames keep coming after the last item, ms. */
export const warmFrameMs = 1000;

const browserScheduler: FrameScheduler = {
  requestFrame: (run) => requestAnimationFrame(run),
  cancelFrame: (handle) => cancelAnimationFrame(handle),
  setTimer: (run, ms) => setTimeout(run, ms),
  clearTimer: (handle) => clearTimeout(handle),
  hidden: () => document.visibilityState === "hidden",
  now: () => performance.now(),
};

export function createFrameBatcher<T>(
  apply: (items: T[]) => void,
  scheduler: FrameScheduler = browserScheduler,
  warmMs: number = warmFrameMs,
): FrameBatcher<T> {
  let held: T[] = [];
  // the one frame asked for: a handover, or only keeping the frames coming
  let frame: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let warmUntil = -Infinity;
  let stopped = false;
  const unschedule = () => {
    if (frame !== undefined) scheduler.cancelFrame(frame);
    if (timer !== undefined) scheduler.clearTimer(timer);
    frame = undefined;
    timer = undefined;
  };
  const flush = () => {
    unschedule();
    if (held.length === 0) return;
    const items = held;
    held = [];
    apply(items);
  };
  const onFrame = () => {
    frame = undefined;
    flush();
    if (!stopped && frame === undefined && scheduler.now() < warmUntil) frame = scheduler.requestFrame(onFrame);
  };
  return {
    push(item) {
      if (stopped) return;
      held.push(item);
      if (scheduler.hidden()) return flush();
      warmUntil = scheduler.now() + warmMs;
      if (held.length > 1) return;
      frame ??= scheduler.requestFrame(onFrame);
      timer = scheduler.setTimer(flush, batchTimeoutMs);
    },
    flush,
    cancel() {
      stopped = true;
      unschedule();
      held = [];
    },
  };
}
