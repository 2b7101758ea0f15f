/**
 * What the page's main thread did in each frame, from a Chromium trace (Playwright's
 * `browser.startTracing` with {@link frameTraceCategories}). A frame is the interval between two
 * `BeginMainThreadFrame`s of the renderer's main thread; in it, the main thread's busy time (its
 * top-level tasks, clipped to the interval) and how much of that was script, style, layout and
 * paint (pre-paint, paint, layerize, commit). A long frame with a small busy time was the
 * browser's pacing (the compositor, software raster with `--disable-gpu`, a starved CPU), not
 * the page's work; a long frame with a busy time near its length was the page's own work.
 */

/** The trace categories {@link framesOfTrace} reads. */
export const frameTraceCategories = ["blink.user_timing", "devtools.timeline", "disabled-by-default-devtools.timeline", "disabled-by-default-devtools.timeline.frame", "toplevel"];
/** {@link frameTraceCategories} and V8's sampled stacks: a trace kept for an analysis of where script time went. */
export const profiledTraceCategories = [...frameTraceCategories, "disabled-by-default-v8.cpu_profiler"];

export interface TracedFrame {
  /** Interval from this frame's start to the next one's, ms. */
  intervalMs: number;
  /** The renderer main thread's busy time in it, ms. */
  busyMs: number;
  scriptMs: number;
  styleMs: number;
  layoutMs: number;
  paintMs: number;
}

interface TraceEvent {
  name: string;
  cat?: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: { name?: string };
}

const groups: Record<string, keyof Omit<TracedFrame, "intervalMs" | "busyMs">> = {
  FunctionCall: "scriptMs",
  EventDispatch: "scriptMs",
  TimerFire: "scriptMs",
  FireAnimationFrame: "scriptMs",
  EvaluateScript: "scriptMs",
  "v8.evaluateModule": "scriptMs",
  RunMicrotasks: "scriptMs",
  "V8.GC_SCAVENGER": "scriptMs",
  MajorGC: "scriptMs",
  MinorGC: "scriptMs",
  UpdateLayoutTree: "styleMs",
  RecalculateStyles: "styleMs",
  Layout: "layoutMs",
  PrePaint: "paintMs",
  Paint: "paintMs",
  Layerize: "paintMs",
  Commit: "paintMs",
  "LocalFrameView::RunPrePaintLifecyclePhase": "paintMs",
};

interface MainThread {
  /** The renderer main thread's events, by time. */
  events: TraceEvent[];
  /** Its `BeginMainThreadFrame` times, µs. */
  starts: number[];
  /** The page's User Timing marks (`performance.mark`), by time: name and trace time, µs. */
  marks: { name: string; ts: number }[];
}

/** The renderer main thread that fired the most animation frames (the page under test), and the trace's marks. */
function mainThreadOf(trace: Buffer | string, markedBy?: string): MainThread | undefined {
  const { traceEvents } = JSON.parse(typeof trace === "string" ? trace : trace.toString("utf8")) as { traceEvents: TraceEvent[] };
  const mainThreads = new Set(
    traceEvents.filter((e) => e.ph === "M" && e.name === "thread_name" && e.args?.name === "CrRendererMain").map((e) => `${e.pid}:${e.tid}`),
  );
  // with `markedBy`, only the renderer that made that mark (a trace of two pages holds both renderers)
  const markingPids = markedBy === undefined ? undefined : new Set(traceEvents.filter((e) => e.name === markedBy && e.cat?.includes("blink.user_timing")).map((e) => e.pid));
  const counts = new Map<string, number>();
  for (const e of traceEvents) {
    const key = `${e.pid}:${e.tid}`;
    if (e.name === "BeginMainThreadFrame" && mainThreads.has(key) && (!markingPids || markingPids.has(e.pid))) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const main = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (!main) return undefined;
  const events = traceEvents.filter((e) => `${e.pid}:${e.tid}` === main).sort((a, b) => a.ts - b.ts);
  // the page's own marks: a trace holds every renderer's (another page may make the same marks)
  const pid = Number(main.split(":")[0]);
  const marks = traceEvents
    .filter((e) => e.pid === pid && e.cat?.includes("blink.user_timing") && (e.ph === "R" || e.ph === "I" || e.ph === "n"))
    .map((e) => ({ name: e.name, ts: e.ts }))
    .sort((a, b) => a.ts - b.ts);
  return { events, starts: events.filter((e) => e.name === "BeginMainThreadFrame").map((e) => e.ts), marks };
}

/** Hands each top-level task's span (as `busyMs`) and each outermost group event's span to `add`. */
function accumulate(events: TraceEvent[], add: (from: number, to: number, field: keyof Omit<TracedFrame, "intervalMs">) => void): void {
  let taskEnd = -Infinity;
  const groupEnd: Record<string, number> = {};
  for (const e of events) {
    if (e.ph !== "X" || e.dur === undefined) continue;
    const end = e.ts + e.dur;
    if (e.name === "ThreadControllerImpl::RunTask" && e.ts >= taskEnd) {
      add(e.ts, end, "busyMs");
      taskEnd = end;
    }
    const group = groups[e.name];
    // only the outermost event of a group counts (a FunctionCall inside a FireAnimationFrame is already in it)
    if (group && e.ts >= (groupEnd[group] ?? -Infinity)) {
      add(e.ts, end, group);
      groupEnd[group] = end;
    }
  }
}

/** The frames of the renderer main thread that fired the most animation frames (the page under test). */
export function framesOfTrace(trace: Buffer | string): TracedFrame[] {
  const main = mainThreadOf(trace);
  if (!main) return [];
  const { events, starts } = main;
  const frames: TracedFrame[] = [];
  for (let i = 0; i + 1 < starts.length; i++) {
    frames.push({ intervalMs: (starts[i + 1]! - starts[i]!) / 1000, busyMs: 0, scriptMs: 0, styleMs: 0, layoutMs: 0, paintMs: 0 });
  }
  const frameAt = (ts: number): number => {
    // the last start ≤ ts (binary search)
    let lo = 0;
    let hi = starts.length - 1;
    if (ts < starts[0]!) return -1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= ts) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  accumulate(events, (from, to, field) => {
    for (let i = Math.max(0, frameAt(from)); i < frames.length && starts[i]! < to; i++) {
      const overlap = Math.min(to, starts[i + 1]!) - Math.max(from, starts[i]!);
      if (overlap > 0) frames[i]![field] += overlap / 1000;
    }
  });
  return frames;
}

/** The page's main thread between two User Timing marks: how long, how busy, and with what. */
export interface MarkedSpan extends Omit<TracedFrame, "intervalMs"> {
  spanMs: number;
  /** Animation frames that began in it. */
  frames: number;
}

/**
 * For each `to` mark, the main thread's work since the last `from` mark before it (marks made with
 * `performance.mark` in the traced page; the trace needs the `blink.user_timing` category).
 */
export function spansBetweenMarks(trace: Buffer | string, from: string, to: string): MarkedSpan[] {
  const main = mainThreadOf(trace, to);
  if (!main) return [];
  const spans: { start: number; end: number; span: MarkedSpan }[] = [];
  let start: number | undefined;
  for (const mark of main.marks) {
    if (mark.name === from) start = mark.ts;
    else if (mark.name === to && start !== undefined) {
      spans.push({ start, end: mark.ts, span: { spanMs: (mark.ts - start) / 1000, frames: 0, busyMs: 0, scriptMs: 0, styleMs: 0, layoutMs: 0, paintMs: 0 } });
      start = undefined;
    }
  }
  for (const s of spans) s.span.frames = main.starts.filter((t) => t >= s.start && t < s.end).length;
  accumulate(main.events, (a, b, field) => {
    for (const s of spans) {
      const overlap = Math.min(b, s.end) - Math.max(a, s.start);
      if (overlap > 0) s.span[field] += overlap / 1000;
    }
  });
  return spans.map((s) => s.span);
}
