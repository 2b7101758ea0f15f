/**
 * Recorded runs of the real CLI (`../shared/transcripts-real/*.jsonl`: CLI 1.0.x to 2.1.2xx,
 * recorded by other projects) replayed through live sessions in the browser. A Conduit of its own
 * runs the replay stand-in (test/replay-cli/replay-cli.mjs) as its CLI; each recording gets a
 * session whose first prompt names it, then the recorded host's later prompts. On screen: no page
 * error, every assistant text block's words, every tool call as a tool card with its result, each
 * turn's end with its cost, and no line Conduit could not read. A file dropped into the folder is
 * replayed without code changes.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Page } from "@playwright/test";
import { formatUsd } from "../components/format/money";
import { expectationsOf, listRecordings, readRecording, recordingsDir, type RecordedLine } from "../test/replay-cli/recordings";
import { expect, password, sendPrompt, startSession, test, uniqueEmail } from "./fixtures";
import { startConduitInstance, type ConduitInstance } from "./support/conduit-instance";

const dir = recordingsDir();
const names = listRecordings(dir);

/** What the page showed, chunk by chunk of the virtualized list (each chunk as last drawn). */
interface Seen {
  text: string;
  turnEnds: string[];
  tools: { tool: string; state: string }[];
  badLines: number;
}

/**
 * Scrolls every chunk of the conversation into view (opening subagent threads), reads it, and
 * returns to the bottom. Rows are virtualized: a chunk far from the screen is an empty block.
 */
async function scan(page: Page): Promise<Seen> {
  const chunks = await page.evaluate(async () => {
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const read: Record<string, { text: string; turnEnds: string[]; tools: { tool: string; state: string }[]; badLines: number }> = {};
    for (const el of [...document.querySelectorAll<HTMLElement>("[data-chunk]")]) {
      el.scrollIntoView({ block: "center" });
      for (let i = 0; i < 50 && el.dataset.drawn !== "true"; i++) await pause(20);
      let opened = false;
      for (const button of el.querySelectorAll<HTMLButtonElement>('[data-testid="subagent-stream"] > button[aria-expanded="false"]')) {
        button.click();
        opened = true;
      }
      if (opened) await pause(100);
      read[el.dataset.chunk ?? ""] = {
        text: el.innerText,
        turnEnds: [...el.querySelectorAll<HTMLElement>('[data-testid="turn-end"]')].map((e) => e.innerText),
        tools: [...el.querySelectorAll<HTMLElement>('[data-testid="tool-card"]')].map((e) => ({ tool: e.dataset.tool ?? "", state: e.dataset.state ?? "" })),
        badLines: [...el.querySelectorAll<HTMLElement>('[data-testid="notice"]')].filter((e) => e.innerText.includes("could not read")).length,
      };
    }
    window.scrollTo(0, document.body.scrollHeight);
    return Object.values(read);
  });
  return {
    text: chunks.map((c) => c.text).join("\n"),
    turnEnds: chunks.flatMap((c) => c.turnEnds),
    tools: chunks.flatMap((c) => c.tools),
    badLines: chunks.reduce((n, c) => n + c.badLines, 0),
  };
}

/** Each result's own cost as the turn end shows it (the total is cumulative per process). */
function turnCosts(lines: readonly RecordedLine[]): number[] {
  const costs: number[] = [];
  let last = 0;
  for (const { out, value } of lines) {
    if (out || value?.type !== "result") continue;
    const total = [value.total_cost_usd, value.total_cost, value.cost_usd].find((v): v is number => typeof v === "number");
    if (total === undefined) continue;
    costs.push(total >= last ? total - last : total);
    last = total;
  }
  return costs;
}

/**
 * Sends a recorded prompt as a person would. A prompt that is a slash command alone (`/compact`)
 * opens the command menu as it is typed, and Enter then completes the highlighted command instead
 * of sending (prompt-box.tsx: the Enter meant for the menu never sends; e2e/prompt-box.spec.ts):
 * Esc closes the menu first, so Enter sends the recorded text as it is.
 */
async function sendRecordedPrompt(page: Page, text: string): Promise<void> {
  if (/^\/\S*$/.test(text)) {
    const input = page.getByTestId("prompt-input");
    await input.fill(text);
    await expect(page.getByTestId("slash-menu")).toBeVisible();
    await input.press("Escape");
    await expect(page.getByTestId("slash-menu")).toHaveCount(0);
    await expect(input).toHaveValue(text);
    await input.press("Enter");
    await expect(input).toHaveValue("");
    await expect(page.locator('[data-testid="message-user"][data-pending="true"]')).toHaveCount(0);
    return;
  }
  await sendPrompt(page, text);
}

const words = (text: string) => text.match(/[\p{L}\p{N}]{4,}/gu) ?? [];

test.describe("recorded runs of the real CLI, replayed in the browser", () => {
  // Skipped only where ../shared/transcripts-real is absent (a checkout without the shared folder); CI has it.
  test.skip(names.length === 0, `no recordings in ${dir}: the replay is skipped`);

  let instance: ConduitInstance | undefined;
  let page: Page;
  let slug: string;
  const pageErrors: string[] = [];

  test.beforeAll(async ({ browser }) => {
    test.setTimeout(300_000);
    // the stand-in as this Conduit's CLI; a wrapper names the recordings' folder (the CLI's
    // environment is an allow-list, so the folder travels in its argv)
    const bin = path.join(process.cwd(), "test-results", "replay-cli-bin");
    mkdirSync(bin, { recursive: true });
    const wrapper = path.join(bin, "claude");
    const script = path.join(process.cwd(), "test", "replay-cli", "replay-cli.mjs");
    writeFileSync(wrapper, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(script)} --replay-dir ${JSON.stringify(dir)} "$@"\n`);
    chmodSync(wrapper, 0o755);
    instance = await startConduitInstance({
      name: "replay",
      env: {
        CLAUDE_CLI_PATH: wrapper,
        // the stand-in reads the recordings beside the repository: no sandbox around it
        CONDUIT_SANDBOX: "off",
        CONDUIT_SIGNUP: "open",
        CONDUIT_SESSION_MAX: "200",
        CONDUIT_SESSION_MAX_PER_USER: "200",
        CONDUIT_SESSION_MAX_PER_WORKSPACE: "200",
      },
    });
    const context = await browser.newContext({ baseURL: instance.url, viewport: { width: 1280, height: 1600 } });
    page = await context.newPage();
    page.on("pageerror", (err) => pageErrors.push(String(err)));
    await page.goto("/signup");
    await page.getByTestId("signup-name").fill("Rita");
    await page.getByTestId("signup-email").fill(uniqueEmail("replay"));
    await page.getByTestId("signup-password").fill(password);
    await page.getByTestId("signup-submit").click();
    await expect(page).toHaveURL(/\/workspaces$/);
    const created = await page.request.post("/api/workspaces", { headers: { origin: instance.url }, data: { name: "Replays" } });
    expect(created.status(), await created.text()).toBe(201);
    slug = ((await created.json()) as { data: { slug: string } }).data.slug;
  });

  test.afterAll(async () => {
    await instance?.stop();
  });

  for (const name of names) {
    test(name, async () => {
      test.setTimeout(120_000);
      const lines = readRecording(name, dir);
      const expected = expectationsOf(lines);
      const costs = turnCosts(lines);
      pageErrors.length = 0;

      await page.goto(`/w/${slug}`);
      await startSession(page);
      // results before each later prompt: the turn ends that prompt waits for
      const resultsBefore: number[] = [];
      let results = 0;
      for (const line of lines) {
        if (line.out && line.value?.type === "user") resultsBefore.push(results);
        else if (!line.out && line.value?.type === "result") results++;
      }
      for (const [i, prompt] of expected.prompts.entries()) {
        if (i > 0) {
          const waitFor = resultsBefore[i] ?? 0;
          await expect.poll(async () => (await scan(page)).turnEnds.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(waitFor);
        }
        await sendRecordedPrompt(page, i === 0 ? `[replay:${name}] ${prompt || "(the recorded prompt)"}` : prompt || "(the recorded prompt)");
      }
      await expect.poll(async () => (await scan(page)).turnEnds.length, { timeout: 30_000 }).toBe(expected.results);
      // subagent threads draw once opened; the last scan reads them
      await expect
        .poll(async () => {
          const seen = await scan(page);
          return seen.tools.filter((t) => t.state === "running" || t.state === "awaiting-approval").length;
        }, { timeout: 15_000 })
        .toBeLessThanOrEqual(expected.tools.filter((t) => !t.hasResult).length);
      const seen = await scan(page);

      const onScreen = new Set(words(seen.text));
      const missing = expected.texts.flatMap(({ text }) => words(text).filter((w) => !onScreen.has(w)));
      expect(missing, `${name}: words of assistant text blocks not on screen`).toEqual([]);

      const byName = (list: { name?: string; tool?: string }[]) => {
        const counts = new Map<string, number>();
        for (const t of list) counts.set(t.name ?? t.tool ?? "", (counts.get(t.name ?? t.tool ?? "") ?? 0) + 1);
        return Object.fromEntries([...counts.entries()].sort());
      };
      expect(byName(seen.tools), `${name}: tool cards`).toEqual(byName(expected.tools));
      expect(
        byName(seen.tools.filter((t) => t.state === "done" || t.state === "error")),
        `${name}: tool cards with their result`,
      ).toEqual(byName(expected.tools.filter((t) => t.hasResult)));

      expect(seen.turnEnds).toHaveLength(expected.results);
      costs.forEach((usd, i) => {
        if (usd > 0) expect(seen.turnEnds[i], `${name}: turn ${i + 1}'s cost`).toContain(formatUsd(usd));
      });
      const total = costs.reduce((a, b) => a + b, 0);
      if (total > 0) await expect(page.getByTestId("session-cost")).toContainText(formatUsd(total));
      expect(seen.badLines, `${name}: lines Conduit could not read`).toBe(0);
      expect(pageErrors, `${name}: page errors`).toEqual([]);
    });
  }
});
