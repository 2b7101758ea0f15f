/**
 * A turn as a person sees it (issue #13 item 10), against the floor: a whole Conduit (`npm start`:
 * edge, web, sidecar, the demo model), Chromium, and a bare long-lived CLI with the stream-json
 * flags on the same scripted model, warm, zero model latency, the two interleaved turn by turn.
 *
 *   turn_ms          Ada presses Enter in the prompt box → the reply's text is painted in her page
 *                    (a MutationObserver sees it in the DOM, then the task after the frame that
 *                    draws it: `afterPaint`; in-page clocks). The breakdown shows the DOM time too.
 *   bare_turn_ms     the bare CLI: its stdin line → its first `assistant` line
 *   approval_ms      Ada presses Enter on a prompt that writes a file → the approval card is painted
 *                    in Bea's page (another member, another browser context), measured the same way
 *   bare_approval_ms the bare CLI: its stdin line → its `can_use_tool` control request
 *   page_js_kb       the session page's JavaScript before Monaco loads, as sent (compressed), KB
 *
 * Medians. Last line: `browser-turn: turn_ms=… bare_turn_ms=… turn_extra_ms=… approval_extra_ms=…
 * page_js_kb=…` (targets in docs/PERFORMANCE.md). Printed figures, never assertions.
 */
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "@playwright/test";
import { loadedScripts, scriptKb, signIn, signUpAndSignIn, untilInPage } from "./support/bench-pages";
import Database from "better-sqlite3";
import { streamJsonFlags } from "../server/sidecar/process/build-cli-args";
import { resolveClaudeBinary } from "../server/sidecar/process/claude-binary";
import { killProcessGroup } from "../server/sidecar/process/cli-process";
import { printProfile, startCpuProfile, type CpuProfile } from "./support/cpu-profile";
import { profiledTraceCategories, spansBetweenMarks, type MarkedSpan } from "./support/frame-trace";
import { processTree, startProcessCpuSampler } from "./support/process-cpu";
import { startConduitInstance, type ConduitInstance } from "../e2e/support/conduit-instance";

const TURNS = Number(process.env.BROWSER_TURN_TURNS ?? 8);
/** `BROWSER_TURN_PROFILE=1`: CPU profiles of Ada's page over the text turns and Bea's over the approvals; prints where script time went. */
const PROFILE = process.env.BROWSER_TURN_PROFILE === "1";
/**
 * `BROWSER_TURN_TRACE=ada` (or `bea`): a Chromium trace of that page over the measured turns, V8's
 * sampler included; prints its main thread's work from the last event received to the reply (the
 * card) in the DOM, and from there to the paint (script, style, layout, paint, frames), and keeps
 * the trace file for DevTools.
 */
const TRACE = process.env.BROWSER_TURN_TRACE === "ada" || process.env.BROWSER_TURN_TRACE === "bea" ? process.env.BROWSER_TURN_TRACE : undefined;
/**
 * `BROWSER_TURN_CPU=1`: samples every 20 ms the CPU time of the processes on the machine (the
 * pages' renderers and the rest of Chromium, each CLI, each Node part) and prints, per text turn,
 * who used the cores from the prompt's stdin line to the first delta's line (the CLI's own part of
 * the turn). The sampler costs the bench process a few per cent of a core.
 */
const CPU = process.env.BROWSER_TURN_CPU === "1";
/**
 * `BROWSER_TURN_SPLIT_CORES=1`: the browser (and the bench driving it) on one core, Conduit's
 * processes (their CLI children inherit it) and the bare CLI on the other (`taskset`), as when the
 * browser runs on the user's machine and not beside the server. A diagnostic of how much of the
 * extra is the pages' CPU taking the CLI's core; the headline's conditions stay the default.
 */
const SPLIT_CORES = process.env.BROWSER_TURN_SPLIT_CORES === "1";
/**
 * `BROWSER_TURN_REDUCED_MOTION=1`: the pages prefer reduced motion (no pulsing dots while a turn
 * runs). A diagnostic of what the pages' animations cost the CLI on a shared machine.
 */
const REDUCED_MOTION = process.env.BROWSER_TURN_REDUCED_MOTION === "1";
const serverCore = 0;
const browserCore = 1;

/** Pins `pids` (all their threads) to `core`. */
function pin(pids: readonly number[], core: number): void {
  for (const pid of pids) execFileSync("taskset", ["-a", "-c", "-p", String(core), String(pid)], { stdio: "ignore" });
}

/** A script that starts Chromium on the browser's core (Playwright starts it as the browser). */
async function pinnedChromium(chromiumPath: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "conduit-pinned-"));
  const file = path.join(dir, "chromium");
  await writeFile(file, `#!/bin/sh\nexec taskset -c ${browserCore} ${JSON.stringify(chromiumPath)} "$@"\n`, { mode: 0o755 });
  return file;
}
const TIMEOUT_MS = 30_000;

/** Groups the machine's processes for `BROWSER_TURN_CPU`. */
function cpuLabel(cmdline: string): string | undefined {
  if (cmdline.includes("chromium")) {
    const type = /--type=(\S+)/.exec(cmdline)?.[1];
    return type === "renderer" ? "Chromium renderers (the two pages)" : type === undefined ? "Chromium browser" : `Chromium ${type}`;
  }
  if (cmdline.includes("stream-json") && !/^\S*bwrap /.test(cmdline)) {
    return / --(session-id|resume) /.test(cmdline) ? "Conduit's CLI" : "bare CLI";
  }
  for (const [part, name] of [
    ["sidecar/main", "sidecar"],
    ["edge", "edge"],
    ["model-server", "demo model"],
    ["next", "web"],
    ["bench/run", "bench"],
  ] as const)
    if (cmdline.includes(part) && (cmdline.includes("node") || cmdline.includes("tsx"))) return name;
  return undefined;
}

function median(values: number[]): number {
  const sorted = [...values].filter(Number.isFinite).sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? NaN : sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

// ---------------------------------------------------------------------------------------------
// the bare CLI

interface BareCli {
  pid: number;
  /** stdin line → first assistant line, ms; waits for the turn's result. */
  turn(text: string): Promise<number>;
  /** stdin line → `system/init` of each turn so far, ms. */
  inits: number[];
  /** The approval turns' `assistant` line with the tool_use → the `can_use_tool` request, ms. */
  toolAsks: number[];
  /** Each turn's stdin line, first `assistant` line and result, on the bench's epoch clock (for the CPU sampler). */
  spans: { start: number; first: number; end: number }[];
  /** stdin line → can_use_tool request, ms; denies it and waits for the result. */
  approval(text: string): Promise<number>;
  close(): Promise<void>;
}

async function startBareCli(modelUrl: string): Promise<BareCli> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-bare-")));
  const cwd = path.join(root, "workspace");
  await Promise.all([mkdir(cwd), mkdir(path.join(root, "config")), mkdir(path.join(root, "home"))]);
  const child: ChildProcessWithoutNullStreams = spawn(resolveClaudeBinary(), [...streamJsonFlags, "--permission-mode", "default"], {
    cwd,
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: path.join(root, "home"),
      ANTHROPIC_BASE_URL: modelUrl,
      ANTHROPIC_API_KEY: "sk-ant-bench",
      CLAUDE_CONFIG_DIR: path.join(root, "config"),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
    } as Record<string, string> as NodeJS.ProcessEnv,
  });
  child.stderr.resume();
  let onMessage:
    | ((message: {
        type?: string;
        subtype?: string;
        request_id?: string;
        request?: { subtype?: string };
        message?: { content?: { type?: string }[] };
      }) => void)
    | undefined;
  const inits: number[] = [];
  const toolAsks: number[] = [];
  const spans: BareCli["spans"] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    try {
      onMessage?.(JSON.parse(line) as never);
    } catch {
      // not JSON
    }
  });
  const send = (text: string) =>
    child.stdin.write(
      `${JSON.stringify({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "", uuid: randomUUID() })}\n`,
    );
  const run = (text: string, until: "assistant" | "approval") =>
    new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`bare CLI: no result within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      let mark: number | undefined;
      const start = performance.now();
      let init: number | undefined;
      let toolUse: number | undefined;
      onMessage = (message) => {
        if (message.type === "system" && message.subtype === "init") init ??= performance.now() - start;
        if (message.type === "assistant" && message.message?.content?.some((block) => block.type === "tool_use")) toolUse ??= performance.now();
        if (until === "assistant" && message.type === "assistant") mark ??= performance.now() - start;
        if (message.type === "control_request" && message.request?.subtype === "can_use_tool") {
          if (until === "approval" && mark === undefined) {
            mark = performance.now() - start;
            if (toolUse !== undefined) toolAsks.push(performance.now() - toolUse);
          }
          child.stdin.write(
            `${JSON.stringify({ type: "control_response", response: { subtype: "success", request_id: message.request_id, response: { behavior: "deny", message: "benchmark" } } })}\n`,
          );
        }
        if (message.type !== "result") return;
        clearTimeout(timer);
        onMessage = undefined;
        inits.push(init ?? NaN);
        if (until === "assistant" && mark !== undefined) spans.push({ start: performance.timeOrigin + start, first: performance.timeOrigin + start + mark, end: performance.timeOrigin + performance.now() });
        resolve(mark ?? NaN);
      };
      send(text);
    });
  return {
    pid: child.pid!,
    inits,
    toolAsks,
    spans,
    turn: (text) => run(text, "assistant"),
    approval: (text) => run(text, "approval"),
    async close() {
      child.stdin.end();
      await new Promise((r) => setTimeout(r, 300));
      killProcessGroup(child.pid!, "SIGKILL");
      await rm(root, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// the browsers

async function signedIn(browser: Browser, base: string, email: string, name: string): Promise<Page> {
  const context = await browser.newContext({ baseURL: base, ...(REDUCED_MOTION ? { reducedMotion: "reduce" as const } : {}) });
  // the page keeps its latency marks for the breakdown (components/session/latency-marks.ts),
  // a traced run as User Timing marks in the trace as well
  await context.addInitScript(`window.__conduitLatencyMarks = ${TRACE ? '"trace"' : "true"}`);
  return signUpAndSignIn(context, base, email, name);
}

// The page scripts are strings: tsx would wrap functions passed to page.evaluate in helpers
// (`__name`) that do not exist in the page. Times are epoch ms with sub-ms precision
// (`performance.timeOrigin + performance.now()`), comparable between the pages of one machine.

/**
 * Both pages' instruments: `afterPaint(f)` runs `f` in the task after the first frame that draws
 * the DOM as it is now. A change made inside a frame's rAF callbacks (the session view renders
 * live events there) is drawn by that same frame: a task posted now runs after its paint. A change
 * made in any other task is drawn by the next frame: the task posted from that frame's rAF runs
 * after its paint. `requestAnimationFrame` is wrapped to tell the two apart: a MutationObserver's
 * callback, queued during a rAF callback, runs before the microtask that ends `inFrame`.
 */
const AFTER_PAINT = `
  const afterFrame = (f) => { const c = new MessageChannel(); c.port1.onmessage = f; c.port2.postMessage(0); };
  if (!window.__benchFrames) {
    window.__benchFrames = { inFrame: false };
    const raf = window.requestAnimationFrame.bind(window);
    window.requestAnimationFrame = (callback) => raf((time) => {
      window.__benchFrames.inFrame = true;
      try { callback(time); } finally { queueMicrotask(() => { window.__benchFrames.inFrame = false; }); }
    });
  }
  const afterPaint = (f) => (window.__benchFrames.inFrame ? afterFrame(f) : requestAnimationFrame(() => afterFrame(f)));
`;

/**
 * Ada's page: the time of each Enter in the prompt box, and of this prompt's reply text appearing:
 * text in a reply bubble after the last prompt shown, which is the one sent. Nothing is counted:
 * the conversation is virtualized, so old rows leave the DOM as new ones come.
 */
const SENDER_SCRIPT = `(() => {
  const now = () => performance.timeOrigin + performance.now();
  ${AFTER_PAINT}
  const replied = () => {
    const prompts = document.querySelectorAll('[data-testid="message-user"]');
    const last = prompts[prompts.length - 1];
    if (!last || !(last.textContent || "").includes(window.__bench.text)) return false;
    for (const reply of document.querySelectorAll('[data-testid="message-assistant"]')) {
      if (!(last.compareDocumentPosition(reply) & Node.DOCUMENT_POSITION_FOLLOWING)) continue;
      // the bubble's screen-reader prefix and "writing…" are not the reply's text
      const text = (reply.textContent || "").replace(/^Claude( \\(subagent\\))?: /, "").replace(/writing…$/, "");
      if (text.trim().length > 0) return true;
    }
    return false;
  };
  window.__bench = { send: 0, reply: 0, painted: 0, text: "", busy: 0 };
  // main-thread tasks over 50 ms between Enter and the paint: the page's own work on the way
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (window.__bench.send > 0 && window.__bench.painted === 0 && performance.timeOrigin + e.startTime >= window.__bench.send) window.__bench.busy += e.duration;
  }).observe({ type: "longtask" });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.target.matches('[data-testid="prompt-input"]')) {
      window.__bench.send = now();
      performance.mark("bench:send");
      window.__bench.reply = 0;
      window.__bench.painted = 0;
      window.__bench.busy = 0;
      window.__bench.text = e.target.value.trim();
    }
  }, true);
  new MutationObserver(() => {
    if (window.__bench.send === 0 || window.__bench.reply !== 0) return;
    if (replied()) {
      window.__bench.reply = now();
      performance.mark("bench:reply");
      // the task after the frame that draws it: the text has been painted (that frame's work included)
      afterPaint(() => { window.__bench.painted = now(); performance.mark("bench:painted"); window.__benchPainted?.(); });
    }
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
})()`;

/** Bea's page: the time a new pending approval card appears. */
const WATCHER_SCRIPT = `(() => {
  const now = () => performance.timeOrigin + performance.now();
  ${AFTER_PAINT}
  const cards = () => document.querySelectorAll('[data-testid="approval-card"][data-status="pending"]').length;
  if (window.__benchObserver) window.__benchObserver.disconnect();
  window.__bench = { seen: 0, painted: 0, cards: cards(), busy: 0, since: now() };
  if (window.__benchLongTasks) window.__benchLongTasks.disconnect();
  window.__benchLongTasks = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (window.__bench.painted === 0 && performance.timeOrigin + e.startTime >= window.__bench.since) window.__bench.busy += e.duration;
  });
  window.__benchLongTasks.observe({ type: "longtask" });
  window.__benchObserver = new MutationObserver(() => {
    if (window.__bench.seen === 0 && cards() > window.__bench.cards) {
      window.__bench.seen = now();
      performance.mark("bench:card");
      afterPaint(() => { window.__bench.painted = now(); performance.mark("bench:card-painted"); window.__benchPainted?.(); });
    }
  });
  window.__benchObserver.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-status"] });
})()`;

async function instrumentSender(page: Page): Promise<void> {
  await page.evaluate(SENDER_SCRIPT);
}

async function instrumentWatcher(page: Page): Promise<void> {
  await page.evaluate(WATCHER_SCRIPT);
}

const until = (page: Page, expression: string) => untilInPage(page, expression, TIMEOUT_MS);

/**
 * Until the page's instrument has stamped the paint: one call that the page answers when it
 * happens, so the bench does not poll the very page it times while the turn runs (a poll every
 * 10 ms cost Ada's renderer and the bench a CDP round trip each, on the CLI's two cores).
 */
async function untilPainted(page: Page): Promise<void> {
  const painted = page.evaluate(`new Promise((resolve) => {
    if (window.__bench.painted > 0) return resolve(true);
    window.__benchPainted = () => { window.__benchPainted = undefined; resolve(true); };
  })`);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no paint stamped within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  try {
    await Promise.race([painted, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// the breakdown: the sidecar's trace lines (CONDUIT_LATENCY_TRACE) and the pages' marks

interface TraceLine {
  stage: string;
  t: number;
  /** CLOCK_MONOTONIC, µs, when `t` was taken */
  mono?: number;
  seq?: number;
  line?: string;
  arrivedAt?: number;
  /** events-inserted: when the insert began, and the seqs of the stage lines it held */
  started?: number;
  seqs?: string;
  /** proxy-*: the request's path */
  path?: string;
}

/**
 * Where a page's clock stands: its epoch time (`performance.timeOrigin + performance.now()`)
 * minus CLOCK_MONOTONIC, ms, from the quickest of a few round trips. Each process's epoch clock
 * is fixed to the monotonic one when the process (the sidecar) or the page starts, so two of them
 * can stand apart by whatever the wall clock was adjusted between those starts: stages of the
 * sidecar and the page are lined up on the monotonic clock instead (the sidecar's lines carry it
 * as `mono`). Measured here: 0.3–1.5 ms apart.
 */
async function pageClock(page: Page): Promise<number> {
  let best = { rtt: Infinity, offset: 0 };
  for (let i = 0; i < 7; i++) {
    const before = Number(process.hrtime.bigint()) / 1e6;
    const epoch = (await page.evaluate("performance.timeOrigin + performance.now()")) as number;
    const after = Number(process.hrtime.bigint()) / 1e6;
    if (after - before < best.rtt) best = { rtt: after - before, offset: epoch - (before + after) / 2 };
  }
  return best.offset;
}

/** Each clock's epoch time minus CLOCK_MONOTONIC, ms: the two pages' ({@link pageClock}) and the bench's own. */
interface Clocks {
  ada: number;
  bea: number;
  bench: number;
}

/** A sidecar line's epoch clock minus CLOCK_MONOTONIC, ms. */
const sidecarClockOf = (line: TraceLine & { mono: number }) => line.t - line.mono / 1000;

/**
 * The `conduit-latency` lines the instance printed after `from` (a length of its output), their
 * times (`t`, `arrivedAt`, `started`: the sidecar's epoch clock) moved to the clock of the page
 * whose {@link pageClock} is `clock`.
 */
function traceLines(output: string, from: number, clock: number): TraceLine[] {
  const lines: TraceLine[] = [];
  for (const match of output.slice(from).matchAll(/conduit-latency (\{.*\})/g)) {
    try {
      const line = JSON.parse(match[1]!) as TraceLine;
      if (line.mono !== undefined) {
        const shift = clock - sidecarClockOf(line as TraceLine & { mono: number });
        line.t += shift;
        if (line.arrivedAt !== undefined) line.arrivedAt += shift;
        if (line.started !== undefined) line.started += shift;
      }
      lines.push(line);
    } catch {
      // a line cut by a chunk boundary: the next read has it whole
    }
  }
  return lines;
}

interface PageMark {
  name: string;
  at: number;
  seq?: number;
  /** `events-applied`: the render's time, ms, and the events' kinds. */
  ms?: number;
  kinds?: string;
}

/** The page's latency marks since the last call (epoch ms), then forgets them. */
async function takeMarks(page: Page): Promise<PageMark[]> {
  return (await page.evaluate(`(() => {
    const marks = (window.__conduitLatencyLog || []).map((m) => ({ name: m.name, at: performance.timeOrigin + m.at, seq: m.seq, ms: m.ms, kinds: m.kinds }));
    window.__conduitLatencyLog = [];
    return marks;
  })()`)) as PageMark[];
}

/** One turn's stages, ms from Enter; NaN where a stage was not seen. */
type Stages = Record<string, number>;

function turnBreakdown(send: number, reply: number, painted: number, trace: TraceLine[], marks: PageMark[]): Stages {
  const command = trace.find((l) => l.stage === "prompt-received");
  const prompt = trace.find((l) => l.stage === "prompt-emitted");
  const snapshot = trace.find((l) => l.stage === "before-snapshot-waited");
  const delta = trace.find((l) => l.stage === "line-emitted" && l.line === "text_delta");
  const received = delta && marks.find((m) => m.name === "event-received" && m.seq === delta.seq);
  const insert = delta && trace.find((l) => l.stage === "events-inserted" && l.seqs?.split(",").includes(String(delta.seq)));
  const acked = marks.find((m) => m.name === "prompt-acked");
  const promptReceived = prompt && marks.find((m) => m.name === "event-received" && m.seq === prompt.seq);
  // the turn's model request through the credential proxy (not the meters' count_tokens)
  const proxied = (stage: string) => trace.find((l) => l.stage === stage && /^\/v1\/messages(\?|$)/.test(l.path ?? ""));
  const rel = (t: number | undefined) => (t === undefined ? NaN : t - send);
  return {
    "prompt command received (sidecar)": rel(command?.t),
    "prompt event emitted (sidecar)": rel(prompt?.t),
    "prompt event received (page)": rel(promptReceived?.at),
    "before-turn snapshot waited, to stdin (sidecar)": rel(snapshot?.t),
    "prompt acked (page)": rel(acked?.at),
    "model request at the credential proxy (sidecar)": rel(proxied("proxy-request")?.t),
    "… its body sent on to the model": rel(proxied("proxy-request-sent")?.t),
    "… the model's answer began": rel(proxied("proxy-response")?.t),
    "… its first chunk written to the CLI": rel(proxied("proxy-first-chunk")?.t),
    "first text delta line arrived (sidecar)": rel(delta?.arrivedAt),
    "… its insert began (sidecar)": rel(insert?.started),
    "… its insert ended (sidecar)": rel(insert?.t),
    "first text delta emitted (sidecar)": rel(delta?.t),
    "first text delta received (page)": rel(received?.at),
    "reply text in the DOM": reply - send,
    "reply text painted": painted - send,
  };
}

function approvalBreakdown(send: number, seen: number, painted: number, trace: TraceLine[], beaMarks: PageMark[]): Stages {
  const command = trace.find((l) => l.stage === "prompt-received");
  const prompt = trace.find((l) => l.stage === "prompt-emitted");
  const snapshot = trace.find((l) => l.stage === "before-snapshot-waited");
  const line = trace.find((l) => l.stage === "line-emitted" && l.line === "can_use_tool");
  // the assistant line carrying the tool_use: the last one that arrived before the question
  const toolUse = trace
    .filter((l) => l.stage === "line-emitted" && l.line === "assistant" && line?.arrivedAt !== undefined && (l.arrivedAt ?? Infinity) <= line.arrivedAt)
    .at(-1);
  const asked = trace.find((l) => l.stage === "approval-asked");
  const contextRead = trace.find((l) => l.stage === "approval-context-read");
  const rowWritten = trace.find((l) => l.stage === "approval-row-written");
  const reviewRead = trace.find((l) => l.stage === "approval-review-read");
  const told = trace.find((l) => l.stage === "approval-told");
  const received = beaMarks.find((m) => m.name === "approval-requested");
  const rel = (t: number | undefined) => (t === undefined ? NaN : t - send);
  return {
    "prompt command received (sidecar)": rel(command?.t),
    "prompt event emitted (sidecar)": rel(prompt?.t),
    "before-turn snapshot waited, to stdin (sidecar)": rel(snapshot?.t),
    "tool_use (assistant) line arrived (sidecar)": rel(toolUse?.arrivedAt),
    "can_use_tool line arrived (sidecar)": rel(line?.arrivedAt),
    "approval service asked": rel(asked?.t),
    "… its workspace, members and rules read": rel(contextRead?.t),
    "… its row written": rel(rowWritten?.t),
    "… what the card shows read": rel(reviewRead?.t),
    "approval sent to the deciders' rooms": rel(told?.t),
    "approval:requested received (Bea's page)": rel(received?.at),
    "card in Bea's DOM": seen - send,
    "card painted": painted - send,
  };
}

/** Medians of each stage over the turns, printed as one indented line per stage with the step from the previous one. */
function printBreakdown(title: string, all: Stages[]): void {
  if (all.length === 0) return;
  console.log(`  ${title} (median ms from Enter; step from the previous stage):`);
  let previous = 0;
  for (const key of Object.keys(all[0]!)) {
    const m = median(all.map((s) => s[key] ?? NaN));
    if (key.startsWith("(")) {
      console.log(`    ${key.padEnd(48)} ${m.toFixed(1).padStart(7)}`);
      continue;
    }
    console.log(`    ${key.padEnd(48)} ${m.toFixed(1).padStart(7)}  (+${(m - previous).toFixed(1)})`);
    if (Number.isFinite(m)) previous = m;
  }
}

async function prompt(page: Page, text: string): Promise<void> {
  const input = page.getByTestId("prompt-input");
  await input.fill(text);
  await input.press("Enter");
}

/**
 * The turn of the prompt `text` has ended on the page: the last prompt shown is `text` and a turn
 * end follows it. Rows are not counted: the conversation is virtualized, so old ones leave the DOM.
 */
async function waitForTurnEnd(page: Page, text: string): Promise<void> {
  await until(
    page,
    `(() => {
      const rows = [...document.querySelectorAll('[data-testid="message-user"], [data-testid="turn-end"]')];
      const prompts = rows.filter((r) => r.getAttribute("data-testid") === "message-user");
      const lastPrompt = prompts[prompts.length - 1];
      const last = rows[rows.length - 1];
      return !!lastPrompt && lastPrompt.textContent.includes(${JSON.stringify(text)}) && last.getAttribute("data-testid") === "turn-end";
    })()`,
  ).catch(async (error: unknown) => {
    const dump = await page.evaluate(`JSON.stringify({ y: window.scrollY, h: document.documentElement.scrollHeight, ih: window.innerHeight,
      rows: [...document.querySelectorAll('[data-testid="conversation"] li, ol[aria-label="Conversation"] > *')].map((r) => (r.getAttribute("data-index") || "") + " " + (r.textContent || "").slice(0, 60)) })`);
    console.error(`the turn of "${text}" did not end on the page; its scroll position and rows:`, dump);
    throw error;
  });
}

/**
 * What a page applied of the live stream (`events-applied` marks, epoch ms on Ada's clock): the
 * renders before the first text delta reached Ada's page (while the CLI works towards it) and over
 * the whole turn.
 */
interface AppliedOnPage {
  beforeDelta: { batches: number; ms: number; each: { kinds: string; ms: number }[] };
  turn: { batches: number; ms: number };
}

function appliedOnPage(marks: PageMark[], firstDeltaAt: number): AppliedOnPage {
  const applied = marks.filter((m) => m.name === "events-applied");
  const before = applied.filter((m) => m.at < firstDeltaAt);
  const sum = (all: PageMark[]) => all.reduce((total, m) => total + (m.ms ?? 0), 0);
  return {
    beforeDelta: { batches: before.length, ms: sum(before), each: before.map((m) => ({ kinds: m.kinds ?? "", ms: m.ms ?? 0 })) },
    turn: { batches: applied.length, ms: sum(applied) },
  };
}

/** A Conduit turn: Enter → reply text on Ada's screen, ms, and its stages. */
async function conduitTurn(
  ada: Page,
  bea: Page,
  text: string,
  output: () => string,
  clocks: Clocks,
): Promise<{ ms: number; stages: Stages; busy: number; send: number; end: number; applied: { ada: AppliedOnPage; bea: AppliedOnPage } }> {
  await takeMarks(ada);
  await takeMarks(bea);
  const from = output().length;
  await prompt(ada, text);
  await untilPainted(ada).catch(async (error: unknown) => {
    console.error(`no reply to "${text}" on the page; the bench's state and rows:`, await ada.evaluate(`JSON.stringify({ bench: window.__bench, rows: [...document.querySelectorAll('ol[aria-label] > *')].map((r) => (r.getAttribute("data-index") || "") + " " + (r.textContent || "").slice(0, 60)) })`));
    throw error;
  });
  const { send, reply, painted, busy } = (await ada.evaluate("window.__bench")) as { send: number; reply: number; painted: number; busy: number };
  await waitForTurnEnd(ada, text);
  // on the bench's clock
  const end = performance.timeOrigin + performance.now();
  const adaMarks = await takeMarks(ada);
  const beaMarks = (await takeMarks(bea)).map((m) => ({ ...m, at: m.at - clocks.bea + clocks.ada }));
  const stages = turnBreakdown(send, reply, painted, traceLines(output(), from, clocks.ada), adaMarks);
  const firstDeltaAt = send + (stages["first text delta received (page)"] ?? NaN);
  const applied = { ada: appliedOnPage(adaMarks, firstDeltaAt), bea: appliedOnPage(beaMarks, firstDeltaAt) };
  return { ms: painted - send, stages, busy, send, end, applied };
}

/** A Conduit approval: Enter on Ada's page → the pending card on Bea's, ms, and its stages; Bea denies it. */
async function conduitApproval(
  ada: Page,
  bea: Page,
  text: string,
  output: () => string,
  clocks: Clocks,
): Promise<{ ms: number; stages: Stages; busy: number; send: number }> {
  await instrumentWatcher(bea);
  await takeMarks(bea);
  const from = output().length;
  await prompt(ada, text);
  await untilPainted(bea);
  const { send } = (await ada.evaluate("window.__bench")) as { send: number };
  const onBea = (await bea.evaluate("window.__bench")) as { seen: number; painted: number; busy: number };
  // Bea's page clock read on Ada's
  const toAda = (t: number) => t - clocks.bea + clocks.ada;
  const [seen, painted, busy] = [toAda(onBea.seen), toAda(onBea.painted), onBea.busy];
  const beaMarks = (await takeMarks(bea)).map((m) => ({ ...m, at: toAda(m.at) }));
  await bea.locator('[data-testid="approval-card"][data-status="pending"]').last().getByTestId("deny-button").click();
  await waitForTurnEnd(ada, text);
  return { ms: painted - send, stages: approvalBreakdown(send, seen, painted, traceLines(output(), from, clocks.ada), beaMarks), busy, send };
}

/** The session page's scripts (not Monaco's) as sent and as decoded, KB, from a fresh load. */
async function pageJavaScript(browser: Browser, base: string, email: string, url: string): Promise<{ sentKb: number; decodedKb: number }> {
  const context = await browser.newContext({ baseURL: base });
  try {
    const page = await signIn(context, email);
    // a fresh context: nothing cached but what the sign-in pages loaded, so clear the cache first
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.clearBrowserCache");
    await page.goto(url);
    await page.getByTestId("session-view").waitFor();
    await page.waitForLoadState("networkidle");
    return scriptKb(await loadedScripts(page));
  } finally {
    await context.close();
  }
}

/** Stages of a Conduit turn, ms from the prompt's event (the sidecar's clock, same machine). */
interface TurnStages {
  /** CLI's `command_lifecycle started`: the line reached the CLI's stdin and it took it. */
  started: number;
  /** `system/init` of the turn, then `system/status requesting` (just before the model request). */
  init: number;
  requesting: number;
  /** The model's first streamed event, stored. */
  messageStart: number;
  /** The `assistant` line carrying a tool_use, stored; then the Approval row it led to. */
  toolUse: number;
  approvalRow: number;
}

/** Reads each prompt's stages from the event log (SQLite file of the instance). */
function turnStages(databaseFile: string): Map<string, TurnStages> {
  const db = new Database(databaseFile, { readonly: true });
  try {
    const rows = db.prepare("SELECT kind, payload, createdAt FROM SessionEvent ORDER BY sessionId, seq").all() as {
      kind: string;
      payload: string;
      createdAt: string | number;
    }[];
    const approvals = (db.prepare("SELECT createdAt FROM Approval ORDER BY createdAt").all() as { createdAt: string | number }[]).map((a) =>
      typeof a.createdAt === "number" ? a.createdAt : Date.parse(a.createdAt),
    );
    const out = new Map<string, TurnStages>();
    let current: { text: string; at: number; stages: Partial<TurnStages> } | undefined;
    for (const row of rows) {
      const at = typeof row.createdAt === "number" ? row.createdAt : Date.parse(row.createdAt);
      if (row.kind === "prompt") {
        current = { text: (JSON.parse(row.payload) as { text: string }).text, at, stages: {} };
        continue;
      }
      if (!current || row.kind !== "cli") continue;
      const m = JSON.parse(row.payload) as { type?: string; subtype?: string; status?: string; state?: string; event?: { type?: string } };
      const mark = (key: keyof TurnStages) => (current!.stages[key] ??= at - current!.at);
      if (m.type === "command_lifecycle" && m.state === "started") mark("started");
      else if (m.type === "system" && m.subtype === "init") mark("init");
      else if (m.type === "system" && m.subtype === "status" && m.status === "requesting") mark("requesting");
      else if (m.type === "stream_event" && m.event?.type === "message_start") mark("messageStart");
      else if (m.type === "assistant" && row.payload.includes('"type":"tool_use"')) mark("toolUse");
      else if (m.type === "result") {
        const approval = approvals.find((a) => a >= current!.at);
        if (approval !== undefined && current.stages.toolUse !== undefined) current.stages.approvalRow = approval - current.at;
        out.set(current.text, { started: NaN, init: NaN, requesting: NaN, messageStart: NaN, toolUse: NaN, approvalRow: NaN, ...current.stages });
        current = undefined;
      }
    }
    return out;
  } finally {
    db.close();
  }
}

/** The traced page's main thread on the way to the reply (Ada) or the card (Bea), medians. */
function printTracedSpans(trace: Buffer, ada: boolean): void {
  const [received, shown, painted] = ada
    ? ["conduit:event-received", "bench:reply", "bench:painted"]
    : ["conduit:approval-requested", "bench:card", "bench:card-painted"];
  const line = (title: string, spans: MarkedSpan[]) => {
    const m = (key: keyof MarkedSpan) => median(spans.map((s) => s[key])).toFixed(1);
    console.log(
      `    ${title.padEnd(44)} span ${m("spanMs")}  busy ${m("busyMs")}  script ${m("scriptMs")}  style ${m("styleMs")}  ` +
        `layout ${m("layoutMs")}  paint ${m("paintMs")}  frames ${m("frames")}   (n=${spans.length})`,
    );
  };
  console.log(`  ${ada ? "Ada's" : "Bea's"} main thread, traced (median ms over the measured ${ada ? "turns" : "approvals"}):`);
  line(`${received} → ${shown}`, spansBetweenMarks(trace, received, shown));
  line(`${shown} → ${painted}`, spansBetweenMarks(trace, shown, painted));
}

/** Starts a CPU profile of `page` (when the bench profiles); the stop function returns it. */
async function startProfile(page: Page): Promise<() => Promise<CpuProfile | undefined>> {
  if (!PROFILE) return async () => undefined;
  return startCpuProfile(page);
}

export interface BrowserTurnResult {
  turnMs: number;
  bareTurnMs: number;
  approvalMs: number;
  bareApprovalMs: number;
  pageJsKb: number;
  pageJsDecodedKb: number;
}

/** Runs the benchmark and prints its figures; the last line is the headline. */
export async function run(): Promise<BrowserTurnResult> {
  let conduit: ConduitInstance | undefined;
  let browser: Browser | undefined;
  let bare: BareCli | undefined;
  try {
    conduit = await startConduitInstance({ name: "bench-browser-turn", env: { CONDUIT_SIGNUP: "open", CONDUIT_LATENCY_TRACE: "1" }, timeoutMs: 600_000 });
    const base = conduit.url.replace(/\/$/, "");
    const modelUrl = /model-server listening on (\S+)/.exec(conduit.output())?.[1];
    if (!modelUrl) throw new Error("the demo model's URL was not printed");
    const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
    if (SPLIT_CORES) {
      pin(processTree(conduit.pid!).map(Number), serverCore);
      pin([process.pid], browserCore);
      console.log(`browser-turn: split cores: Conduit and the bare CLI on core ${serverCore}, Chromium and the bench on core ${browserCore}`);
    }
    browser = await chromium.launch({
      executablePath: SPLIT_CORES ? await pinnedChromium(chromiumPath) : chromiumPath,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-quic"],
    });
    const stamp = Date.now().toString(36);
    const adaEmail = `ada-${stamp}@bench.test`;
    const ada = await signedIn(browser, base, adaEmail, "Ada");
    const bea = await signedIn(browser, base, `bea-${stamp}@bench.test`, "Bea");
    const created = await ada.request.post("/api/workspaces", { headers: { origin: base }, data: { name: `Bench ${stamp}` } });
    const { data: ws } = (await created.json()) as { data: { slug: string } };
    const added = await ada.request.post(`/api/workspaces/${ws.slug}/members`, {
      headers: { origin: base },
      data: { email: `bea-${stamp}@bench.test`, role: "editor" },
    });
    if (added.status() !== 201) throw new Error(`adding Bea failed: ${await added.text()}`);
    await ada.goto(`/w/${ws.slug}`);
    await ada.getByTestId("session-new").click();
    await ada.getByTestId("session-new-mode").selectOption("default");
    await ada.getByTestId("session-new-submit").click();
    await ada.getByTestId("session-view").waitFor();
    const sessionUrl = ada.url();
    await bea.goto(sessionUrl);
    await bea.getByTestId("session-view").waitFor();
    await instrumentSender(ada);

    bare = await startBareCli(modelUrl);
    if (SPLIT_CORES) pin([bare.pid], serverCore);
    // warm: both CLIs started, both pages connected, the code paths run once
    const output = conduit.output;
    const clocks: Clocks = { ada: await pageClock(ada), bea: await pageClock(bea), bench: performance.timeOrigin + performance.now() - Number(process.hrtime.bigint()) / 1e6 };
    // a page's epoch time on the bench's clock (the CPU sampler's)
    const onBench = (t: number) => t - clocks.ada + clocks.bench;
    await conduitTurn(ada, bea, "hello warm-up", output, clocks);
    await bare.turn("hello warm-up");
    await conduitApproval(ada, bea, "write warm-up", output, clocks);
    await bare.approval("write warm-up");

    const turns: number[] = [];
    const bareTurns: number[] = [];
    const approvals: number[] = [];
    const bareApprovals: number[] = [];
    const turnStagesSeen: Stages[] = [];
    const approvalStagesSeen: Stages[] = [];
    const adaProfile = await startProfile(ada);
    const beaProfile = await startProfile(bea);
    if (TRACE) await browser.startTracing(TRACE === "ada" ? ada : bea, { categories: profiledTraceCategories });
    const sampler = CPU ? startProcessCpuSampler(cpuLabel) : undefined;
    const cpuWindows: { wallMs: number; cpu: Map<string, number> }[] = [];
    // the whole text turn, Enter → its end on Ada's page: the work a turn costs each part, whatever its timing
    const cpuTurns: { wallMs: number; cpu: Map<string, number> }[] = [];
    // the approval turn, the tool_use line → the CLI's question: the CLI's permission check
    const cpuAskWindows: { wallMs: number; cpu: Map<string, number> }[] = [];
    const appliedSeen: { ada: AppliedOnPage; bea: AppliedOnPage }[] = [];
    for (let i = 1; i <= TURNS; i++) {
      const turn = await conduitTurn(ada, bea, `hello ${i}`, output, clocks);
      turns.push(turn.ms);
      appliedSeen.push(turn.applied);
      const stdin = turn.stages["before-turn snapshot waited, to stdin (sidecar)"];
      const delta = turn.stages["first text delta line arrived (sidecar)"];
      if (sampler && stdin !== undefined && delta !== undefined && Number.isFinite(stdin + delta)) {
        cpuWindows.push({ wallMs: delta - stdin, cpu: sampler.between(onBench(turn.send + stdin), onBench(turn.send + delta)) });
      }
      if (sampler) cpuTurns.push({ wallMs: turn.end - onBench(turn.send), cpu: sampler.between(onBench(turn.send), turn.end) });
      turnStagesSeen.push({ ...turn.stages, "(Ada's long tasks on the way, total)": turn.busy });
      bareTurns.push(await bare.turn(`hello ${i}`));
      const approval = await conduitApproval(ada, bea, `write ${i}`, output, clocks);
      approvals.push(approval.ms);
      approvalStagesSeen.push({ ...approval.stages, "(Bea's long tasks on the way, total)": approval.busy });
      const asked = approval.stages["tool_use (assistant) line arrived (sidecar)"];
      const question = approval.stages["can_use_tool line arrived (sidecar)"];
      if (sampler && asked !== undefined && question !== undefined && Number.isFinite(asked + question)) {
        cpuAskWindows.push({ wallMs: question - asked, cpu: sampler.between(onBench(approval.send + asked), onBench(approval.send + question)) });
      }
      bareApprovals.push(await bare.approval(`write ${i}`));
    }
    sampler?.stop();
    const adaProfiled = await adaProfile();
    const beaProfiled = await beaProfile();
    const traced = TRACE ? await browser.stopTracing() : undefined;
    // the sidecar's latency lines, kept for a closer look (beside a trace, their `mono` stamps are its clock)
    await mkdir("test-results", { recursive: true });
    await writeFile(path.join("test-results", `browser-turn-sidecar${TRACE ? `-${TRACE}` : ""}.log`), output());
    const js = await pageJavaScript(browser, base, adaEmail, sessionUrl);
    const stages = turnStages(conduit.databaseFile);
    const stage = (prefix: string, key: keyof TurnStages) =>
      median([...Array(TURNS).keys()].map((i) => stages.get(`${prefix} ${i + 1}`)?.[key] ?? NaN));
    const result: BrowserTurnResult = {
      turnMs: median(turns),
      bareTurnMs: median(bareTurns),
      approvalMs: median(approvals),
      bareApprovalMs: median(bareApprovals),
      pageJsKb: js.sentKb,
      pageJsDecodedKb: js.decodedKb,
    };
    const f = (n: number) => n.toFixed(1);
    console.log(`browser-turn: ${TURNS} warm turns of each kind, interleaved with a bare CLI on the same demo model; medians, ms`);
    console.log(`  turn      conduit ${f(result.turnMs)}  bare ${f(result.bareTurnMs)}   (all: ${turns.map(f).join(" ")})`);
    console.log(`  approval  conduit ${f(result.approvalMs)}  bare ${f(result.bareApprovalMs)}   (all: ${approvals.map(f).join(" ")})`);
    for (const prefix of ["hello", "write"]) {
      console.log(
        `  ${prefix} turns, from the prompt's event: CLI took it ${f(stage(prefix, "started"))}, init ${f(stage(prefix, "init"))}, ` +
          `model request ${f(stage(prefix, "requesting"))}, model's first event stored ${f(stage(prefix, "messageStart"))}` +
          (prefix === "write" ? `, tool_use line stored ${f(stage(prefix, "toolUse"))}, Approval row ${f(stage(prefix, "approvalRow"))}` : ""),
      );
    }
    printBreakdown("turn, Enter → reply text on Ada's screen", turnStagesSeen);
    for (const who of ["ada", "bea"] as const) {
      const seen = appliedSeen.map((a) => a[who]);
      const kinds = new Map<string, number[]>();
      for (const batch of seen.flatMap((a) => a.beforeDelta.each)) kinds.set(batch.kinds, [...(kinds.get(batch.kinds) ?? []), batch.ms]);
      console.log(
        `  ${who === "ada" ? "Ada's" : "Bea's"} page, live events applied (render included; median per text turn): before the first delta reached Ada ` +
          `${f(median(seen.map((a) => a.beforeDelta.batches)))} batches ${f(median(seen.map((a) => a.beforeDelta.ms)))} ms, ` +
          `the whole turn ${f(median(seen.map((a) => a.turn.batches)))} batches ${f(median(seen.map((a) => a.turn.ms)))} ms`,
      );
      const common = [...kinds].sort((a, b) => b[1].length - a[1].length).slice(0, 6);
      console.log(`    batches before it, over the turns (count, median ms): ${common.map(([k, ms]) => `${ms.length}× ${f(median(ms))} [${k}]`).join("  ")}`);
    }
    const printCpu = (title: string, windows: typeof cpuWindows) => {
      if (windows.length === 0) return;
      const names = [...new Set(windows.flatMap((w) => [...w.cpu.keys()]))];
      const rows = names.map((name) => [name, median(windows.map((w) => w.cpu.get(name) ?? 0))] as const).sort((a, b) => b[1] - a[1]);
      console.log(`  CPU ${title} (median ms per turn; wall ${f(median(windows.map((w) => w.wallMs)))} ms, two cores):`);
      for (const [name, ms] of rows) console.log(`    ${name.padEnd(40)} ${f(ms)}`);
    };
    printCpu("from the prompt's stdin line to the first delta's line", cpuWindows);
    printCpu("of the whole text turn, Enter to its result on Ada's page", cpuTurns);
    printCpu("of the approval turn, its tool_use line to its can_use_tool line", cpuAskWindows);
    if (sampler) {
      // the same turns of the bare CLI (the pages idle): what its own work costs it without company
      const measured = bare.spans.slice(-TURNS);
      printCpu(
        "of the bare CLI's text turn, its stdin line to its first assistant line",
        measured.map((span) => ({ wallMs: span.first - span.start, cpu: sampler.between(span.start, span.first) })),
      );
      printCpu("of the bare CLI's whole text turn, its stdin line to its result", measured.map((span) => ({ wallMs: span.end - span.start, cpu: sampler.between(span.start, span.end) })));
    }
    printBreakdown("approval, Enter on Ada's page → the card on Bea's", approvalStagesSeen);
    const raw = /conduit-latency (\{[^\n]*"mono"[^\n]*\})/.exec(output())?.[1];
    if (raw) {
      // the sidecar's epoch clock minus the monotonic one (the stages above are lined up on the monotonic clock)
      const sidecarClock = sidecarClockOf(JSON.parse(raw) as TraceLine & { mono: number });
      console.log(
        `  clocks (epoch − monotonic, lined up above): the sidecar's ${f(sidecarClock - clocks.ada)} ms from Ada's page, Bea's page ${f(clocks.bea - clocks.ada)} ms from Ada's`,
      );
    }
    console.log(
      `  bare CLI, from its stdin line: init ${f(median(bare.inits.slice(2)))} (the warm turns); its tool_use line → can_use_tool ${f(median(bare.toolAsks.slice(1)))} ` +
        `(Conduit's CLI: tool_use stored → Approval row ${f(stage("write", "approvalRow") - stage("write", "toolUse"))}, the approval service's ~3 ms included)`,
    );
    const domMedian = (all: Stages[], key: string) => median(all.map((x) => x[key] ?? NaN));
    console.log(
      `  in the DOM rather than painted (the measure before 2026-12-01 19:00): turn_extra_ms=${f(domMedian(turnStagesSeen, "reply text in the DOM") - result.bareTurnMs)} ` +
        `approval_extra_ms=${f(domMedian(approvalStagesSeen, "card in Bea's DOM") - result.bareApprovalMs)}`,
    );
    // Each Conduit turn and the bare turn right after it ran within a second of each other: the
    // median of their differences follows the host's speed as it drifts during a run, where the
    // difference of the two medians (the headline, as the issue defines it) can mix fast and slow spells.
    const paired = (conduit: number[], bareOnes: number[]) => median(conduit.map((ms, i) => ms - (bareOnes[i] ?? NaN)));
    console.log(
      `  paired (median of each turn's difference from the bare turn beside it): turn_extra_ms=${f(paired(turns, bareTurns))} ` +
        `approval_extra_ms=${f(paired(approvals, bareApprovals))}`,
    );
    console.log(`  session page JavaScript before Monaco: ${f(result.pageJsKb)} KB sent, ${f(result.pageJsDecodedKb)} KB decoded`);
    if (traced) {
      printTracedSpans(traced, TRACE === "ada");
      const file = path.join("test-results", `browser-turn-trace-${TRACE}.json`);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, traced);
      console.log(`  the trace: ${file} (DevTools, Performance panel: load profile)`);
    }
    printProfile("Ada's page over all measured turns", adaProfiled);
    printProfile("Bea's page over all measured turns", beaProfiled);
    for (const [who, profile] of [["ada", adaProfiled], ["bea", beaProfiled]] as const) {
      if (!profile) continue;
      // for DevTools, or a source-mapped look at a build made with CONDUIT_BROWSER_SOURCE_MAPS=1
      const file = path.join("test-results", `browser-turn-${who}.cpuprofile`);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, JSON.stringify(profile));
      console.log(`  the profile: ${file}`);
    }
    console.log(
      `browser-turn: turn_ms=${f(result.turnMs)} bare_turn_ms=${f(result.bareTurnMs)} turn_extra_ms=${f(result.turnMs - result.bareTurnMs)} ` +
        `approval_extra_ms=${f(result.approvalMs - result.bareApprovalMs)} page_js_kb=${f(result.pageJsKb)}`,
    );
    return result;
  } finally {
    await bare?.close();
    await browser?.close();
    await conduit?.stop();
  }
}

export default run;

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
