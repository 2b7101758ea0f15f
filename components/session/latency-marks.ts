/**
 * A turn's and an approval's way through the page, for `bench/browser-turn`: recorded only when
 * the bench turned it on before the page's scripts ran, so an ordinary page keeps nothing and pays
 * one property read per call.
 *
 * - `window.__conduitLatencyMarks = true`: each call appends `{ name, at, seq }` to
 *   `window.__conduitLatencyLog` (`at` from `performance.now()`); the bench takes and empties it.
 * - `= "trace"`: a User Timing mark `conduit:<name>` as well, for a Chromium trace. A mark costs
 *   the page far more than an array push (a streamed turn makes about eighty), so only a traced
 *   run pays for it.
 */
export type LatencyMark = "prompt-acked" | "event-received" | "approval-requested" | "events-applied";

interface LatencyEntry {
  name: LatencyMark;
  at: number;
  seq?: number;
  /** `events-applied`: how long applying them took (the render included), ms. */
  ms?: number;
  /** `events-applied`: what they were ({@link eventLabel} each). */
  kinds?: string;
}

interface LatencyWindow {
  __conduitLatencyMarks?: boolean | "trace";
  __conduitLatencyLog?: LatencyEntry[];
}

function recording(): LatencyWindow | undefined {
  if (typeof window === "undefined") return undefined;
  const page = window as LatencyWindow;
  const on = page.__conduitLatencyMarks;
  return on === true || on === "trace" ? page : undefined;
}

export function markLatency(name: LatencyMark, seq?: number): void {
  const page = recording();
  if (!page) return;
  (page.__conduitLatencyLog ??= []).push({ name, at: performance.now(), seq });
  if (page.__conduitLatencyMarks === "trace") performance.mark(`conduit:${name}`);
}

/** A live event's kind, and a CLI line's type (and stream event's type): `cli:stream_event:message_start`. */
function eventLabel(event: { kind: string; payload?: unknown }): string {
  if (event.kind !== "cli" || event.payload === null || typeof event.payload !== "object") return event.kind;
  const line = event.payload as { type?: string; subtype?: string; event?: { type?: string } };
  return ["cli", line.type, line.subtype ?? line.event?.type].filter(Boolean).join(":");
}

/**
 * Applies live events through `apply` and, while the bench records, marks `events-applied` with
 * what they were and how long applying them (their render) took: the page's share of a turn.
 */
export function appliedWithLatency<E extends { kind: string; seq: number; payload?: unknown }>(events: readonly E[], apply: () => void): void {
  const page = recording();
  if (!page) return apply();
  const start = performance.now();
  apply();
  const at = performance.now();
  (page.__conduitLatencyLog ??= []).push({ name: "events-applied", at, seq: events.at(-1)?.seq, ms: at - start, kinds: events.map(eventLabel).join(",") });
}
