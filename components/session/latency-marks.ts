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
export type LatencyMark = "prompt-acked" | "event-received" | "approval-requested";

interface LatencyWindow {
  __conduitLatencyMarks?: boolean | "trace";
  __conduitLatencyLog?: { name: LatencyMark; at: number; seq?: number }[];
}

export function markLatency(name: LatencyMark, seq?: number): void {
  if (typeof window === "undefined") return;
  const page = window as LatencyWindow;
  const on = page.__conduitLatencyMarks;
  if (on !== true && on !== "trace") return;
  (page.__conduitLatencyLog ??= []).push({ name, at: performance.now(), seq });
  if (on === "trace") performance.mark(`conduit:${name}`);
}
