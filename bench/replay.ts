/**
 * The recorded runs of the real CLI (`../shared/transcripts-real/*.jsonl`, issue #39) through
 * Conduit's stdout path and the page's fold, and (unless `REPLAY_BENCH_RENDER=0`) through a live
 * Conduit in Chromium with the replay stand-in as its CLI.
 *
 *   runs, turns, events  recordings, results, CLI lines (the host's own `"_dir":"out"` lines left out)
 *   decode_events_s      CLI lines a second through LineFramer → decodeLine → the conversation fold
 *                        (createConversationBuilder), every recording in turn, median of rounds
 *   render_p95_ms        a recorded turn's last line written by the stand-in → its turn end on
 *                        screen (a MutationObserver in the page, timed in the task after the next
 *                        frame; both clocks are this machine's wall clock), p95 over every turn of
 *                        every recording. The stand-in writes a turn at once (unless
 *                        REPLAY_BENCH_LINE_DELAY_MS), so this includes drawing the whole turn.
 *                        The `render:` line splits it: to the page's socket (a WebSocket frame
 *                        carrying the result), then socket to paint; REPLAY_BENCH_VERBOSE=1 lists
 *                        every turn.
 *
 * Last line: `replay: runs=… turns=… events=… render_p95_ms=… decode_events_s=…`. Printed
 * figures, never assertions.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { chromium, type Page } from "@playwright/test";
import { createConversationBuilder } from "../components/session/conversation";
import { decodeLine } from "../server/shared/claude-protocol/decode-line";
import { LineFramer } from "../server/shared/claude-protocol/line-framer";
import type { WireEvent } from "../server/shared/wire/session";
import { listRecordings, readRecording, recordingsDir, repoRoot } from "../test/replay-cli/recordings";
import { startConduitInstance } from "../e2e/support/conduit-instance";

/**
 * `REPLAY_BENCH_LINE_DELAY_MS`: the stand-in's pause between lines (default 0: a recorded turn is
 * written at once, so its turn end waits behind the drawing of the whole turn; the real CLI's lines
 * come seconds apart, one API call each).
 */
const LINE_DELAY_MS = Math.max(0, Number(process.env.REPLAY_BENCH_LINE_DELAY_MS ?? 0) || 0);
const ROUNDS = 9;
const ROUND_MS = 300;

interface Run {
  name: string;
  /** The CLI's stdout as written (CLI lines only). */
  stdout: string;
  lines: number;
  results: number;
  prompts: string[];
  /** Results before each host prompt: the turn ends a later prompt waits for. */
  resultsBefore: number[];
}

function loadRuns(): Run[] {
  const dir = recordingsDir();
  return listRecordings(dir).map((name) => {
    const lines = readRecording(name, dir);
    const cli = lines.filter((l) => !l.out);
    const prompts = lines
      .filter((l) => l.out && l.value?.type === "user")
      .map((l) => {
        const content = (l.value?.message as { content?: unknown } | undefined)?.content;
        return typeof content === "string" ? content : Array.isArray(content) ? content.map((b: { text?: unknown }) => (typeof b?.text === "string" ? b.text : "")).join("") : "";
      });
    return {
      name,
      stdout: cli.map((l) => `${l.raw}\n`).join(""),
      lines: cli.length,
      results: cli.filter((l) => l.value?.type === "result").length,
      prompts: prompts.length > 0 ? prompts : [""],
      resultsBefore: resultsBeforePrompts(lines),
    };
  });
}

function resultsBeforePrompts(lines: readonly { out: boolean; value: Record<string, unknown> | undefined }[]): number[] {
  const before: number[] = [];
  let results = 0;
  for (const line of lines) {
    if (line.out && line.value?.type === "user") before.push(results);
    else if (!line.out && line.value?.type === "result") results++;
  }
  return before.length > 0 ? before : [0];
}

/** One pass: every run's stdout framed, decoded and folded; returns the lines handled. */
function decodePass(runs: readonly Run[], encoded: readonly Uint8Array[]): number {
  let events = 0;
  const at = new Date(0).toISOString();
  runs.forEach((_, r) => {
    const framer = new LineFramer();
    const builder = createConversationBuilder();
    let seq = 0;
    for (const framed of [...framer.push(encoded[r]!), ...framer.end()]) {
      if (typeof framed !== "string") continue;
      const decoded = decodeLine(framed);
      seq++;
      const event: WireEvent = decoded.ok
        ? { sessionId: "s", seq, kind: "cli", payload: JSON.parse(framed) as unknown, trimmed: false, at }
        : { sessionId: "s", seq, kind: "cli-bad-line", payload: { raw: framed }, trimmed: false, at };
      builder.add([event]);
      builder.view();
      events++;
    }
  });
  return events;
}

function decodeEventsPerSecond(runs: readonly Run[]): number {
  const encoded = runs.map((r) => new TextEncoder().encode(r.stdout));
  for (let i = 0; i < 3; i++) decodePass(runs, encoded);
  const rates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let events = 0;
    const start = performance.now();
    while (performance.now() - start < ROUND_MS) events += decodePass(runs, encoded);
    rates.push(events / ((performance.now() - start) / 1000));
  }
  return median(rates);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
}

/** Every turn's render time (ms): the stand-in's last line of the turn → the turn end in the page. */
/** A turn's render time (ms) and its two parts: to the page's socket, then to the paint. */
interface TurnTime {
  run: string;
  total: number;
  /** The stand-in's last line of the turn → the socket frame with its result in the page. */
  wire: number;
  /** That frame → the turn end painted. */
  page: number;
}

async function renderTimes(runs: readonly Run[]): Promise<TurnTime[]> {
  const work = path.join(repoRoot, "test-results", "bench-replay");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const timing = path.join(work, "turns.log");
  const wrapper = path.join(work, "claude");
  const script = path.join(repoRoot, "test", "replay-cli", "replay-cli.mjs");
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(script)} --replay-dir ${JSON.stringify(recordingsDir())} --replay-timing-file ${JSON.stringify(timing)} --replay-line-delay-ms ${LINE_DELAY_MS} "$@"\n`,
  );
  chmodSync(wrapper, 0o755);
  const instance = await startConduitInstance({
    name: "bench-replay",
    env: {
      CLAUDE_CLI_PATH: wrapper,
      CONDUIT_SANDBOX: "off",
      CONDUIT_SIGNUP: "open",
      CONDUIT_SESSION_MAX: "200",
      CONDUIT_SESSION_MAX_PER_USER: "200",
      CONDUIT_SESSION_MAX_PER_WORKSPACE: "200",
    },
  });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run"],
  });
  const times: TurnTime[] = [];
  try {
    const context = await browser.newContext({ baseURL: instance.url, viewport: { width: 1280, height: 1600 } });
    await context.addInitScript(WATCH_RESULT_FRAMES);
    const page = await context.newPage();
    await page.goto("/signup");
    await page.getByTestId("signup-name").fill("Bench");
    await page.getByTestId("signup-email").fill(`bench-replay-${Date.now().toString(36)}@example.test`);
    await page.getByTestId("signup-password").fill("correct-horse-42");
    await page.getByTestId("signup-submit").click();
    await page.waitForURL(/\/workspaces$/);
    const created = await page.request.post("/api/workspaces", { headers: { origin: instance.url }, data: { name: "Bench replays" } });
    const { slug } = ((await created.json()) as { data: { slug: string } }).data;
    for (const run of runs) {
      writeFileSync(timing, "");
      await page.goto(`/w/${slug}`);
      await page.getByTestId("session-new").click();
      await page.getByTestId("session-new-submit").click();
      await page.getByTestId("session-view").waitFor();
      await page.evaluate(WATCH_TURN_ENDS);
      for (const [i, prompt] of run.prompts.entries()) {
        // a later prompt waits for the turns the recording holds before the host's next one
        if (i > 0) await waitForTurnEnds(page, run.resultsBefore[i] ?? 0);
        await sendPrompt(page, i === 0 ? `[replay:${run.name}] ${prompt || "(replay)"}` : prompt || "(replay)");
      }
      await waitForTurnEnds(page, run.results);
      const seen = (await page.evaluate("window.__turnEnds")) as number[];
      const frames = (await page.evaluate("window.__resultFrames")) as number[];
      const written = readFileSync(timing, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => Number(l.split(" ")[1]));
      if (written.length !== run.results || seen.length !== run.results) {
        throw new Error(`${run.name}: ${run.results} results recorded, ${written.length} written by the stand-in, ${seen.length} turn ends seen`);
      }
      written.forEach((t, i) => {
        const frame = frames[i] ?? Number.NaN;
        times.push({ run: run.name, total: seen[i]! - t, wire: frame - t, page: seen[i]! - frame });
      });
    }
  } finally {
    await browser.close();
    await instance.stop();
  }
  return times;
}

/**
 * Before the page's scripts: the wall-clock time (ms) of each socket frame that carries a CLI
 * result (`window.__resultFrames`), as it reaches the page's WebSocket.
 */
const WATCH_RESULT_FRAMES = `(() => {
  window.__resultFrames = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        if (typeof event.data === "string" && event.data.includes('"type":"result"')) window.__resultFrames.push(Date.now());
      });
    }
  };
})()`;

/**
 * The page's instrument, a string (tsx would wrap a function passed to page.evaluate in helpers,
 * `__name`, that do not exist in the page): `window.__turnEnds` gets the wall-clock time (ms) at
 * which each new turn end was first painted: a MutationObserver sees it enter the DOM, and the
 * time is taken in the task after the next frame (a rAF callback, then a message). Turn ends are
 * counted, not remembered by element: a chunk drawn again makes new elements for old turn ends
 * (a replayed session is short and not scrolled, so its turn ends stay in the DOM).
 */
const WATCH_TURN_ENDS = `(() => {
  window.__turnEnds = [];
  let counted = 0;
  const note = () => {
    const now = document.querySelectorAll('[data-testid="turn-end"]').length;
    for (; counted < now; counted++) {
      const at = window.__turnEnds.length;
      window.__turnEnds.push(Number.NaN);
      requestAnimationFrame(() => {
        const c = new MessageChannel();
        c.port1.onmessage = () => { window.__turnEnds[at] = Date.now(); };
        c.port2.postMessage(0);
      });
    }
  };
  note();
  new MutationObserver(note).observe(document.body, { childList: true, subtree: true });
})()`;

async function waitForTurnEnds(page: Page, n: number): Promise<void> {
  // a function, not a string: the page's CSP has no 'unsafe-eval' (anonymous arrows get no `__name`)
  await page.waitForFunction(
    (count) => {
      const ends = (window as unknown as { __turnEnds: number[] }).__turnEnds;
      return ends.length >= count && ends.every((t) => !Number.isNaN(t));
    },
    n,
    { timeout: 60_000 },
  );
}

/**
 * Types a prompt and sends it with Enter. A slash command alone (`/compact`) opens the command
 * menu, where Enter completes instead of sending: Esc closes the menu first.
 */
async function sendPrompt(page: Page, text: string): Promise<void> {
  const input = page.getByTestId("prompt-input");
  await input.fill(text);
  if (/^\/\S*$/.test(text)) {
    await page.getByTestId("slash-menu").waitFor();
    await input.press("Escape");
    await page.getByTestId("slash-menu").waitFor({ state: "detached" });
  }
  await input.press("Enter");
  await page.waitForFunction(() => document.querySelector<HTMLTextAreaElement>('[data-testid="prompt-input"]')?.value === "", undefined, { timeout: 10_000 });
}

export default async function run(): Promise<void> {
  const runs = loadRuns();
  if (runs.length === 0) {
    console.log(`replay: no recordings in ${recordingsDir()}`);
    return;
  }
  const events = runs.reduce((n, r) => n + r.lines, 0);
  const turns = runs.reduce((n, r) => n + r.results, 0);
  const decodeRate = decodeEventsPerSecond(runs);
  let render = "n/a";
  if (process.env.REPLAY_BENCH_RENDER !== "0") {
    const turns = await renderTimes(runs);
    const times = turns.map((t) => t.total);
    const part = (xs: number[]) => `median ${median(xs).toFixed(0)}, p95 ${percentile(xs, 95).toFixed(0)}`;
    console.log(
      `render: ${times.length} turns, median ${median(times).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms; ` +
        `to the page's socket ${part(turns.map((t) => t.wire))} ms, socket to paint ${part(turns.map((t) => t.page))} ms`,
    );
    if (process.env.REPLAY_BENCH_VERBOSE === "1") for (const t of turns) console.log(`  ${t.run}: ${t.total} ms (socket ${t.wire}, page ${t.page})`);
    render = percentile(times, 95).toFixed(0);
  }
  console.log(`replay: runs=${runs.length} turns=${turns} events=${events} render_p95_ms=${render} decode_events_s=${Math.round(decodeRate)}`);
}
