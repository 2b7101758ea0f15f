import { readFileSync } from "node:fs";
import path from "node:path";
import type { WireEvent } from "@/server/shared/wire/session";

const fixtures = path.join(process.cwd(), "server/shared/claude-protocol/fixtures");

/**
 * A protocol fixture as the log the sidecar would keep: each CLI stdout line a `cli` event,
 * each user message the host wrote a `prompt` event by Ada.
 */
export function fixtureLog(name: string, sessionId = "s1"): WireEvent[] {
  const rows = readFileSync(path.join(fixtures, `${name}.ndjson`), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { dir: "in" | "out"; msg?: Record<string, unknown> });
  const events: WireEvent[] = [];
  for (const row of rows) {
    const msg = row.msg;
    if (!msg) continue;
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, events.length)).toISOString();
    if (row.dir === "out") {
      events.push({ sessionId, seq: events.length + 1, kind: "cli", payload: msg, trimmed: false, at });
    } else if (msg.type === "user") {
      const content = (msg.message as { content: Array<{ text?: string }> }).content;
      const text = content.map((b) => b.text ?? "").join("");
      events.push({
        sessionId,
        seq: events.length + 1,
        kind: "prompt",
        payload: { text },
        trimmed: false,
        user: { id: "u1", name: "Ada" },
        at,
      });
    }
  }
  return events;
}

/** A plain event for reducer tests. */
export function ev(seq: number, kind: WireEvent["kind"] = "cli", payload: unknown = { type: "keep_alive" }): WireEvent {
  return { sessionId: "s1", seq, kind, payload, trimmed: false, at: "2026-01-01T00:00:00.000Z" };
}
