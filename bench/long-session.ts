/**
 * A long session in the browser (issue #13 item 7): a whole Conduit (`npm start`), a stopped
 * session of 10,000 realistic events (500 turns: prompt, init, streamed text, reply, an Edit,
 * Bash or Read with its result, the result) written straight into its database, and Chromium.
 *
 *   first_paint_ms       navigation → the last turn's reply is on screen (an in-page rAF probe
 *                        from the document's start; the page opens at the log's tail), whether in
 *                        the server-rendered picture of the last screen or in the live list; the
 *                        open's stages also give when the live list showed it
 *   js_heap_mb           the page's used JS heap after scrolling up through every page (CDP)
 *   scroll_frame_p95_ms  p95 of the frame intervals (rAF deltas) while wheeling up from the end
 *                        to the session's first event, earlier pages loading on the way
 *   scroll_busy_p95_ms   p95 of the page's main-thread busy time per frame in the same scroll (a
 *                        Chromium trace: script, style, layout, paint): the page's own work
 *   blank_frame_p95_ms   the same wheel loop, as many steps, in the same browser on a blank page
 *                        as tall: the browser's own frame pacing on this machine, no page work
 *   page_js_kb           the session page's scripts before Monaco loads, as sent through the
 *                        edge (compressed when the edge compresses), KB; decoded size printed too
 *
 * Last line: `long-session: events=… first_paint_ms=… js_heap_mb=… scroll_frame_p95_ms=… scroll_busy_p95_ms=…
 * blank_frame_p95_ms=… page_js_kb=… page_js_decoded_kb=…` (targets: first paint ≤ 1000 ms, frame p95 ≤ 33 ms,
 * page JS ≤ 300 KB). Figures, never assertions. The scroll is traced (`LONG_SESSION_TRACE=0` turns the
 * trace off; the trace costs the page a little, the blank page pays the same).
 */
import { writeFile } from "node:fs/promises";
import { chromium, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { loadedScripts, scriptKb, signUpAndSignIn, untilInPage } from "./support/bench-pages";
import { printProfile, startCpuProfile } from "./support/cpu-profile";
import { frameTraceCategories, framesOfTrace, profiledTraceCategories, type TracedFrame } from "./support/frame-trace";
import { startConduitInstance, type ConduitInstance } from "../e2e/support/conduit-instance";
import { seedLongSession, turnMarker } from "../e2e/support/long-session-seed";

const EVENTS = Number(process.env.LONG_SESSION_EVENTS ?? 10_000);
const OPENS = Number(process.env.LONG_SESSION_OPENS ?? 5);
const TRACE = process.env.LONG_SESSION_TRACE !== "0";
/** `LONG_SESSION_PROFILE=1`: a CPU profile of the scroll instead of the trace; prints where script time went (kept as `<LONG_SESSION_SCROLL_TRACE>.cpuprofile` when that is set). */
const PROFILE = process.env.LONG_SESSION_PROFILE === "1";
/**
 * `LONG_SESSION_OPEN_TRACE=<file>`: one more warm open, traced from before its navigation (frames,
 * and V8's sampled stacks), written to `<file>` for an analysis of where the open's time went.
 */
const OPEN_TRACE = process.env.LONG_SESSION_OPEN_TRACE;
/** `LONG_SESSION_SCROLL_TRACE=<file>`: the session scroll's trace, with V8's sampled stacks, written to `<file>`. */
const SCROLL_TRACE = process.env.LONG_SESSION_SCROLL_TRACE;
const TIMEOUT_MS = 60_000;

function percentile(values: number[], p: number): number {
  const sorted = [...values].filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function signedInContext(browser: Browser, base: string, email: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
  return { context, page: await signUpAndSignIn(context, base, email, "Ada") };
}

const until = (page: Page, expression: string) => untilInPage(page, expression, TIMEOUT_MS, 20);

// Strings, not functions: tsx would wrap functions in helpers the page does not have.
/**
 * From the document's start: the first frame in which the marker's reply is inside the viewport,
 * and on the way (for the breakdown) when the page's WebSocket was opened and answered its first
 * large message (the subscribe reply with the log's tail: over 20 KB).
 */
const firstPaintProbe = (marker: string) => `(() => {
  window.__long = { seen: 0, live: 0, gap: 0, wsCreated: 0, wsOpen: 0, tail: 0 };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      if (!window.__long.wsCreated) window.__long.wsCreated = performance.now();
      this.addEventListener("open", () => { if (!window.__long.wsOpen) window.__long.wsOpen = performance.now(); });
      this.addEventListener("message", (e) => {
        if (!window.__long.tail && typeof e.data === "string" && e.data.length > 20000) window.__long.tail = performance.now();
      });
    }
  };
  const inView = (e) => { const r = e.getBoundingClientRect(); return r.bottom > 0 && r.top < window.innerHeight && r.height > 0; };
  const look = () => {
    const hits = Array.from(document.querySelectorAll('[data-testid="message-assistant"]'))
      .filter((e) => (e.textContent || "").includes(${JSON.stringify(marker)}) && inView(e));
    if (hits.length > 0 && !window.__long.seen) window.__long.seen = performance.now();
    // frames after the picture showed and before the live list did in which the last reply was not in view
    if (hits.length === 0 && window.__long.seen) window.__long.gap += 1;
    if (hits.some((e) => !e.closest('[data-testid="conversation-preview"]'))) { window.__long.live = performance.now(); return; }
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})()`;

const FRAME_RECORDER = `(() => {
  window.__frames = [];
  let last = performance.now();
  window.__framesOn = true;
  const tick = (t) => { window.__frames.push(t - last); last = t; if (window.__framesOn) requestAnimationFrame(tick); };
  requestAnimationFrame((t) => { last = t; requestAnimationFrame(tick); });
})()`;

/** Where an open's time went, ms from navigation. */
interface OpenStages {
  "the page's first byte": number;
  "its HTML read": number;
  "scripts run (DOMContentLoaded done)": number;
  "the WebSocket created": number;
  "the WebSocket open": number;
  "the log's tail received": number;
  "the last reply on screen": number;
  "the live list on screen": number;
}

/** Opens the session in a fresh page of `context`; ms from navigation to the last reply on screen. */
async function openOnce(
  context: BrowserContext,
  url: string,
  marker: string,
  /** Runs on the new page before its navigation (a cleared cache, a trace started). */
  beforeGoto?: (page: Page) => Promise<void>,
): Promise<{ page: Page; firstPaintMs: number; stages: OpenStages; gapFrames: number }> {
  const page = await context.newPage();
  await page.addInitScript({ content: firstPaintProbe(marker) });
  await beforeGoto?.(page);
  await page.goto(url);
  await until(page, "window.__long && window.__long.live > 0");
  const probe = (await page.evaluate(
    `(() => { const n = performance.getEntriesByType("navigation")[0]; return { ...window.__long, ttfb: n.responseStart, html: n.responseEnd, dcl: n.domContentLoadedEventEnd }; })()`,
  )) as { seen: number; live: number; gap: number; wsCreated: number; wsOpen: number; tail: number; ttfb: number; html: number; dcl: number };
  const stages: OpenStages = {
    "the page's first byte": probe.ttfb,
    "its HTML read": probe.html,
    "scripts run (DOMContentLoaded done)": probe.dcl,
    "the WebSocket created": probe.wsCreated || NaN,
    "the WebSocket open": probe.wsOpen || NaN,
    "the log's tail received": probe.tail || NaN,
    "the last reply on screen": probe.seen,
    "the live list on screen": probe.live,
  };
  return { page, firstPaintMs: probe.seen, stages, gapFrames: probe.gap };
}

/** Starts tracing `page` when the bench traces; the stop function returns its frames (none untraced). */
async function traceFrames(page: Page, saveTo?: string): Promise<() => Promise<TracedFrame[]>> {
  if (PROFILE) {
    const stop = await startCpuProfile(page);
    return async () => {
      const profile = await stop();
      printProfile("the scroll", profile, 30);
      if (profile && saveTo) {
        // for DevTools, or a source-mapped look at a build made with CONDUIT_BROWSER_SOURCE_MAPS=1
        await writeFile(`${saveTo}.cpuprofile`, JSON.stringify(profile));
        console.log(`  the profile: ${saveTo}.cpuprofile`);
      }
      return [];
    };
  }
  if (!TRACE) return async () => [];
  const browser = page.context().browser()!;
  await browser.startTracing(page, { categories: saveTo ? profiledTraceCategories : frameTraceCategories });
  return async () => {
    const trace = await browser.stopTracing();
    if (saveTo) await writeFile(saveTo, trace);
    return framesOfTrace(trace);
  };
}

const atStart = `document.querySelector('[data-testid="conversation-start"]') !== null && window.scrollY < 5`;

/**
 * Wheels up (1200 px a step, 16 ms apart) until `done` holds in the page or `maxSteps` were taken;
 * the frame intervals meanwhile (rAF deltas) and, traced, what the main thread did per frame.
 */
async function wheelUp(page: Page, done: string, maxSteps: number, saveTraceTo?: string): Promise<{ frames: number[]; traced: TracedFrame[]; steps: number; ms: number }> {
  await page.mouse.move(640, 400);
  const stopTrace = await traceFrames(page, saveTraceTo);
  await page.evaluate(FRAME_RECORDER);
  const started = Date.now();
  let steps = 0;
  for (;;) {
    if ((await page.evaluate(done)) as boolean) break;
    if (steps >= maxSteps) break;
    if (Date.now() - started > 10 * TIMEOUT_MS) throw new Error(`not done within ${10 * TIMEOUT_MS} ms (${steps} wheel steps): ${done}`);
    await page.mouse.wheel(0, -1200);
    steps += 1;
    await page.waitForTimeout(16);
  }
  const ms = Date.now() - started;
  await page.evaluate("window.__framesOn = false");
  const frames = (await page.evaluate("window.__frames")) as number[];
  const traced = await stopTrace();
  return { frames: frames.slice(1), traced, steps, ms };
}

/** Wheels up from the end to the session's first event. */
const scrollToStart = (page: Page) => wheelUp(page, atStart, Infinity, SCROLL_TRACE);

/** The same wheel loop, `steps` steps, on a blank page `height` px tall scrolled to its end: the browser's own pacing. */
async function blankScroll(context: BrowserContext, steps: number, height: number) {
  const page = await context.newPage();
  try {
    await page.setContent(`<!doctype html><body style="margin:0"><div style="height:${Math.round(height)}px"></div></body>`);
    await page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)");
    return await wheelUp(page, atStart, steps);
  } finally {
    await page.close();
  }
}

async function usedHeapMb(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("HeapProfiler.collectGarbage");
  await cdp.send("Performance.enable");
  const { metrics } = await cdp.send("Performance.getMetrics");
  await cdp.detach();
  return (metrics.find((m) => m.name === "JSHeapUsedSize")?.value ?? NaN) / 1024 / 1024;
}

/** The session page's scripts (not Monaco's) from a cold cache: KB as sent and as decoded. */
async function pageJavaScript(context: BrowserContext, url: string, marker: string): Promise<{ sentKb: number; decodedKb: number; scripts: number }> {
  const { page } = await openOnce(context, url, marker, async (fresh) => {
    await (await context.newCDPSession(fresh)).send("Network.clearBrowserCache");
  });
  try {
    await page.waitForLoadState("networkidle");
    const sizes = await loadedScripts(page);
    const largest = [...sizes].sort((a, b) => b.decoded - a.decoded).slice(0, 6);
    for (const s of largest) console.log(`    ${(s.decoded / 1024).toFixed(1)} KB decoded, ${(s.sent / 1024).toFixed(1)} KB sent: ${new URL(s.name).pathname}`);
    return { ...scriptKb(sizes), scripts: sizes.length };
  } finally {
    await page.close();
  }
}

export interface LongSessionResult {
  events: number;
  firstPaintMs: number;
  jsHeapMb: number;
  scrollFrameP95Ms: number;
  pageJsKb: number;
  pageJsDecodedKb: number;
  scrollBusyP95Ms: number;
  blankFrameP95Ms: number;
}

export async function run(): Promise<LongSessionResult> {
  let conduit: ConduitInstance | undefined;
  let browser: Browser | undefined;
  try {
    conduit = await startConduitInstance({ name: "bench-long-session", env: { CONDUIT_SIGNUP: "open" }, timeoutMs: 600_000 });
    const base = conduit.url.replace(/\/$/, "");
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-quic"],
    });
    const stamp = Date.now().toString(36);
    const email = `ada-${stamp}@bench.test`;
    const { context, page: home } = await signedInContext(browser, base, email);
    const created = await home.request.post("/api/workspaces", { headers: { origin: base }, data: { name: `Long ${stamp}` } });
    const { data: ws } = (await created.json()) as { data: { id: string; slug: string } };
    const seed = seedLongSession(conduit.databaseFile, { workspaceId: ws.id, userEmail: email, events: EVENTS });
    const url = `/w/${ws.slug}/s/${seed.sessionId}`;
    const marker = turnMarker(seed.turns);

    // warm: the route compiled and cached, the sidecar holding the session
    const warm = await openOnce(context, url, marker);
    await warm.page.close();
    const paints: number[] = [];
    const openStages: OpenStages[] = [];
    const gaps: number[] = [];
    for (let i = 0; i < OPENS; i++) {
      const opened = await openOnce(context, url, marker);
      paints.push(opened.firstPaintMs);
      openStages.push(opened.stages);
      gaps.push(opened.gapFrames);
      await opened.page.close();
    }
    if (OPEN_TRACE) {
      const traced = await openOnce(context, url, marker, (page) => browser!.startTracing(page, { categories: profiledTraceCategories }));
      await new Promise((r) => setTimeout(r, 500));
      await writeFile(OPEN_TRACE, await browser.stopTracing());
      console.log(`  traced open: the last reply on screen at ${traced.firstPaintMs.toFixed(1)} ms; trace in ${OPEN_TRACE}`);
      await traced.page.close();
    }
    const openHeap = await (async () => {
      const opened = await openOnce(context, url, marker);
      const mb = await usedHeapMb(opened.page);
      await opened.page.close();
      return mb;
    })();

    const { page } = await openOnce(context, url, marker);
    const scrollHeight = (await page.evaluate("document.documentElement.scrollHeight")) as number;
    const scroll = await scrollToStart(page);
    const firstPrompt = (await page.evaluate(
      `Array.from(document.querySelectorAll('[data-testid="message-user"]')).some((e) => (e.textContent || "").includes("step 1 of the refactor"))`,
    )) as boolean;
    const heap = await usedHeapMb(page);
    await page.close();
    const blank = await blankScroll(context, scroll.steps, Math.max(scrollHeight, scroll.steps * 1200 + 2000));
    const js = await pageJavaScript(context, url, marker);

    const result: LongSessionResult = {
      events: seed.events,
      firstPaintMs: percentile(paints, 50),
      jsHeapMb: heap,
      scrollFrameP95Ms: percentile(scroll.frames, 95),
      pageJsKb: js.sentKb,
      pageJsDecodedKb: js.decodedKb,
      scrollBusyP95Ms: percentile(scroll.traced.map((t) => t.busyMs), 95),
      blankFrameP95Ms: percentile(blank.frames, 95),
    };
    const f = (n: number) => n.toFixed(1);
    console.log(`long-session: ${seed.events} events (${seed.turns} turns), ${OPENS} warm opens`);
    console.log(`  first paint of the last screen, ms: median ${f(result.firstPaintMs)} (all: ${paints.map(f).join(" ")})`);
    console.log("  an open, median ms from navigation:");
    for (const stage of Object.keys(openStages[0] ?? {}) as (keyof OpenStages)[])
      console.log(`    ${stage.padEnd(40)} ${f(percentile(openStages.map((o) => o[stage]), 50))}`);
    console.log(`  frames without the last reply in view between it first showing and the live list: ${gaps.join(" ")} (per open)`);
    console.log(`  JS heap: ${f(openHeap)} MB after opening, ${f(heap)} MB after scrolling to the start`);
    console.log(
      `  scroll up to the first event: ${scroll.steps} wheel steps in ${scroll.ms} ms, ${scroll.frames.length} frames, ` +
        `p50 ${f(percentile(scroll.frames, 50))} p95 ${f(result.scrollFrameP95Ms)} p99 ${f(percentile(scroll.frames, 99))} max ${f(Math.max(...scroll.frames))} ms ` +
        `(longer than one 60 Hz frame: ${scroll.frames.filter((ms) => ms > 20).length}); first prompt on screen: ${firstPrompt}`,
    );
    const traced = (label: string, frames: TracedFrame[]) => {
      if (frames.length === 0) return;
      const of = (pick: (t: TracedFrame) => number) => `p50 ${f(percentile(frames.map(pick), 50))} p95 ${f(percentile(frames.map(pick), 95))}`;
      console.log(
        `  ${label} traced, ${frames.length} frames: interval ${of((t) => t.intervalMs)}; main thread busy ${of((t) => t.busyMs)} ` +
          `(script ${of((t) => t.scriptMs)}, style ${of((t) => t.styleMs)}, layout ${of((t) => t.layoutMs)}, paint ${of((t) => t.paintMs)}) ms`,
      );
      const long = frames.filter((t) => t.intervalMs > 34);
      const ownLong = long.filter((t) => t.busyMs > t.intervalMs / 2);
      console.log(`    frames over 34 ms: ${long.length}, of which the main thread was busy more than half: ${ownLong.length}`);
      const worst = [...frames].sort((x, y) => y.intervalMs - x.intervalMs).slice(0, 5);
      console.log(
        `    the five longest (interval / busy = script + style + layout + paint, ms): ` +
          worst.map((t) => `${f(t.intervalMs)} / ${f(t.busyMs)} = ${f(t.scriptMs)} + ${f(t.styleMs)} + ${f(t.layoutMs)} + ${f(t.paintMs)}`).join("; "),
      );
    };
    traced("session scroll", scroll.traced);
    console.log(
      `  blank page, same wheel loop (${blank.steps} steps): ${blank.frames.length} frames, p50 ${f(percentile(blank.frames, 50))} ` +
        `p95 ${f(result.blankFrameP95Ms)} p99 ${f(percentile(blank.frames, 99))} ms`,
    );
    traced("blank scroll", blank.traced);
    console.log(`  session page JavaScript before Monaco: ${js.scripts} scripts, ${f(js.sentKb)} KB sent, ${f(js.decodedKb)} KB decoded`);
    console.log(
      `long-session: events=${result.events} first_paint_ms=${f(result.firstPaintMs)} js_heap_mb=${f(result.jsHeapMb)} ` +
        `scroll_frame_p95_ms=${f(result.scrollFrameP95Ms)} scroll_busy_p95_ms=${f(result.scrollBusyP95Ms)} ` +
        `blank_frame_p95_ms=${f(result.blankFrameP95Ms)} page_js_kb=${f(result.pageJsKb)} page_js_decoded_kb=${f(result.pageJsDecodedKb)}`,
    );
    return result;
  } finally {
    await browser?.close();
    await conduit?.stop();
  }
}

export default run;
