/**
 * Recorded runs of the real CLI (`../shared/transcripts-real/*.jsonl`) through the conversation
 * fold the page draws from: every assistant text block is an item, every tool call a tool item
 * with its result, every result a turn end with its cost. The browser test (e2e/replay.spec.ts)
 * checks the same on screen; this is the fast check of the fold.
 */
import { describe, expect, it } from "vitest";
import type { WireEvent } from "@/server/shared/wire/session";
import { expectationsOf, listRecordings, readRecording, recordingsDir } from "@/test/replay-cli/recordings";
import { buildConversation } from "./conversation";

const dir = recordingsDir();
const names = listRecordings(dir);
if (names.length === 0) console.warn(`[recordings] SKIPPED: no *.jsonl in ${dir}`);

// Skipped only where ../shared/transcripts-real is absent (a checkout without the shared folder): the warning above says so; CI has it.
describe.skipIf(names.length === 0)("recorded runs through the conversation fold", () => {
  it.each(names)("%s", (name) => {
    const lines = readRecording(name, dir);
    const expected = expectationsOf(lines);
    const at = new Date(0).toISOString();
    const events: WireEvent[] = [];
    for (const line of lines) {
      if (!line.value) continue;
      const seq = events.length + 1;
      if (line.out) {
        if (line.value.type === "user") events.push({ sessionId: "s", seq, kind: "prompt", payload: { text: "prompt" }, trimmed: false, at });
        continue;
      }
      events.push({ sessionId: "s", seq, kind: "cli", payload: line.value, trimmed: false, at });
    }
    const view = buildConversation(events);
    const assistantTexts = view.items.flatMap((item) => (item.kind === "assistant" ? [item.text] : []));
    const errorNotices = view.items.flatMap((item) => (item.kind === "notice" && item.tone === "error" ? [item.text] : []));
    for (const { text, apiError } of expected.texts) expect(apiError ? errorNotices : assistantTexts, `${name}: text block missing`).toContain(text);
    const tools = new Map(view.items.flatMap((item) => (item.kind === "tool" ? [[item.id, item] as const] : [])));
    for (const tool of expected.tools) {
      const item = tools.get(tool.id);
      expect(item, `${name}: tool call ${tool.name} ${tool.id} missing`).toBeDefined();
      if (tool.hasResult) expect(item?.result, `${name}: tool ${tool.name} ${tool.id} without its result`).toBeDefined();
    }
    const ends = view.items.filter((item) => item.kind === "turn-end");
    expect(ends).toHaveLength(expected.results);
    for (const end of ends) expect(end.kind === "turn-end" && end.costUsd).toBeTypeOf("number");
    expect(view.items.filter((item) => item.kind === "notice" && item.text.includes("could not read"))).toEqual([]);
  });
});
