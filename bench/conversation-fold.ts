/**
 * What one live event costs the session page's conversation model (issue #13 item 10): folding a
 * session's whole log again for every event (`buildConversation`, the page before 2026-12-01 22:00)
 * against folding only the appended event (`IncrementalConversation`), at several log lengths.
 * The log is the protocol fixture of a streamed turn with a tool call and its approval, repeated
 * (seqs and ids renumbered). Pure CPU in Node, no browser: the render saved on top of this (rows of
 * unchanged items skip their render) is not in these figures.
 *
 * Last line: `conversation-fold: events=… full_ms_per_event=… incremental_us_per_event=…`.
 */
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";
import type { WireEvent } from "../server/shared/wire/session";
import { buildConversation } from "../components/session/conversation";
import { IncrementalConversation } from "../components/session/incremental-conversation";
import { fixtureLog } from "../components/session/test-support";

/** `turns` copies of the fixture, seqs consecutive, the ids of each copy made its own. */
function longLog(turns: number): WireEvent[] {
  const one = fixtureLog("partial-messages");
  const events: WireEvent[] = [];
  for (let t = 0; t < turns; t++) {
    for (const e of one) {
      const payload = JSON.parse(JSON.stringify(e.payload).replace(/"(toolu_[^"]*|msg_[^"]*|[0-9a-f]{8}-[0-9a-f-]{27})"/g, `"$1-${t}"`)) as unknown;
      events.push({ ...e, seq: events.length + 1, payload });
    }
  }
  return events;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function run(): Promise<void> {
  const perTurn = fixtureLog("partial-messages").length;
  let last = { events: 0, full: NaN, incremental: NaN };
  console.log(`conversation-fold: the cost of one appended event (a turn is ${perTurn} events)`);
  for (const turns of [10, 50, 200]) {
    const log = longLog(turns);
    const tail = Math.min(100, log.length);
    const full: number[] = [];
    const incremental: number[] = [];
    const model = new IncrementalConversation();
    model.update(log.slice(0, log.length - tail));
    for (let n = log.length - tail + 1; n <= log.length; n++) {
      const events = log.slice(0, n);
      let t = performance.now();
      buildConversation(events);
      full.push(performance.now() - t);
      t = performance.now();
      model.update(events);
      incremental.push(performance.now() - t);
    }
    last = { events: log.length, full: median(full), incremental: median(incremental) };
    console.log(
      `  ${String(log.length).padStart(6)} events: full rebuild ${last.full.toFixed(3)} ms per event, incremental ${(last.incremental * 1000).toFixed(1)} µs per event (median of the last ${tail})`,
    );
  }
  console.log(
    `conversation-fold: events=${last.events} full_ms_per_event=${last.full.toFixed(3)} incremental_us_per_event=${(last.incremental * 1000).toFixed(1)}`,
  );
}

export default run;

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
