/**
 * The recorded runs of the real CLI (`../shared/transcripts-real/*.jsonl`, issue #39) through
 * Conduit's stdout path and the page's fold, and (unless `REPLAY_BENCH_RENDER=0`) through a live
 * Conduit in Chromium with the replay stand-in as its CLI.
 *
 *   runs, turns, events  recordings, results, CLI lines (the host's own `"_dir":"out"` lines left out)
 *   decode_events_s      CLI lines a second through LineFramer → decodeLine → the conversation fold
 *                        (createConversationBuilder), every recording in turn, median of rounds
 *   render_p95_ms        a recorded turn's last line written by the stand-in → its turn end on
 *                        screen (a MutationObserver in the page; both clocks are this machine's
 *                        wall clock), p95 over every turn of every recording
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

const ROUNDS = 9;
const ROUND_MS = 300;

interface Run {
  name: string;
  /** The CLI's stdout as written (CLI lines only). */
  stdout: string;
  lines: number;
  results: number;
  prompts: string[];
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
    };
  });
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
async function renderTimes(runs: readonly Run[]): Promise<number[]> {
  const work = path.join(repoRoot, "test-results", "bench-replay");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const timing = path.join(work, "turns.log");
  const wrapper = path.join(work, "claude");
  const script = path.join(repoRoot, "test", "replay-cli", "replay-cli.mjs");
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(script)} --replay-dir ${JSON.stringify(recordingsDir())} --replay-timing-file ${JSON.stringify(timing)} "$@"\n`,
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
  const times: number[] = [];
  try {
    const context = await browser.newContext({ baseURL: instance.url, viewport: { width: 1280, height: 1600 } });
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
      await watchTurnEnds(page);
      let turnsSeen = 0;
      for (const [i, prompt] of run.prompts.entries()) {
        const input = page.getByTestId("prompt-input");
        await input.fill(i === 0 ? `[replay:${run.name}] ${prompt || "(replay)"}` : prompt || "(replay)");
        await input.press("Enter");
        // a prompt waits for the turns the recording holds before the host's next one (at least one)
        const target = i === run.prompts.length - 1 ? run.results : Math.min(run.results, turnsSeen + 1);
        await page.waitForFunction((n) => (window as unknown as { __turnEnds: number[] }).__turnEnds.length >= n, target, { timeout: 60_000 });
        turnsSeen = target;
      }
      const seen = await page.evaluate(() => (window as unknown as { __turnEnds: number[] }).__turnEnds);
      const written = readFileSync(timing, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => Number(l.split(" ")[1]));
      written.forEach((t, i) => {
        if (seen[i] !== undefined) times.push(seen[i] - t);
      });
    }
  } finally {
    await browser.close();
    await instance.stop();
  }
  return times;
}

/** Records in the page when each new turn end is added to the DOM (wall clock, ms). */
async function watchTurnEnds(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __turnEnds: number[]; __seenEnds: WeakSet<Element> };
    w.__turnEnds = [];
    w.__seenEnds = new WeakSet();
    const note = () => {
      for (const el of document.querySelectorAll('[data-testid="turn-end"]')) {
        if (w.__seenEnds.has(el)) continue;
        w.__seenEnds.add(el);
        w.__turnEnds.push(Date.now());
      }
    };
    note();
    new MutationObserver(note).observe(document.body, { childList: true, subtree: true });
  });
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
    const times = await renderTimes(runs);
    console.log(`render: ${times.length} turns, median ${median(times).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms`);
    render = percentile(times, 95).toFixed(0);
  }
  console.log(`replay: runs=${runs.length} turns=${turns} events=${events} render_p95_ms=${render} decode_events_s=${Math.round(decodeRate)}`);
}
