/**
 * User Timing marks of a turn's and an approval's way through the page, for `bench/browser-turn`:
 * written only when the bench turned them on (`window.__conduitLatencyMarks = true` before the
 * page's scripts run), so an ordinary page keeps no marks and pays one property read per call.
 */
export type LatencyMark = "prompt-acked" | "event-received" | "approval-requested";

export function markLatency(name: LatencyMark, detail?: Record<string, unknown>): void {
  if (typeof window === "undefined" || (window as { __conduitLatencyMarks?: boolean }).__conduitLatencyMarks !== true) return;
  performance.mark(`conduit:${name}`, { detail });
}
