/**
 * The events a browser holds for one session, keyed by seq. A pure reducer: the sidecar's
 * snapshot, its live facts and a reconnect's catch-up may overlap or arrive out of order, and
 * the log must still hold each seq once. `contiguousSeq` is the last seq before the first gap;
 * a resubscribe asks for what follows it.
 */
import type { WireEvent } from "@/server/shared/wire/session";

export interface SessionLog {
  /** Events in seq order, no duplicates. */
  events: readonly WireEvent[];
  /** Highest seq such that every seq after `baseSeq` up to it is held. */
  contiguousSeq: number;
  /** The seq before the first event the server gave (0 unless a reset snapshot started later). */
  baseSeq: number;
  /** Bumped on every reset, so views can drop state derived from the old log. */
  generation: number;
}

export type SessionLogAction =
  /**
   * A subscribe reply. `from` is the seq it was asked after: an empty log that starts at the
   * tail (`tailAfterSeq`) takes it as its base, and earlier pages come with `earlier`.
   */
  | { type: "snapshot"; events: readonly WireEvent[]; reset: boolean; from?: number }
  /** A page of events before the log's base: every seq in (fromSeq, baseSeq] (`session:events-before`). */
  | { type: "earlier"; events: readonly WireEvent[]; fromSeq: number }
  | { type: "event"; event: WireEvent }
  /** Live facts that arrived together (one frame's worth): the same log as one `event` each, in order. */
  | { type: "events"; events: readonly WireEvent[] }
  /** A trimmed event replaced by its whole payload (`session:fetch-event`). */
  | { type: "replace"; event: WireEvent };

export const emptySessionLog: SessionLog = { events: [], contiguousSeq: 0, baseSeq: 0, generation: 0 };

export function reduceSessionLog(log: SessionLog, action: SessionLogAction): SessionLog {
  switch (action.type) {
    case "snapshot":
      if (action.reset) {
        const events = mergeEvents([], action.events);
        return withEvents(events, Math.max(0, (events[0]?.seq ?? 1) - 1), log.generation + 1);
      }
      // The first snapshot of a tail start. Live facts may precede it (a sidecar that does not run
      // the session joins its room before reading the log): held events all after `from` are those.
      if (
        action.from !== undefined &&
        action.from > 0 &&
        log.baseSeq === 0 &&
        log.events.every((e) => e.seq > action.from!)
      )
        return withEvents(mergeEvents(log.events, action.events), action.from, log.generation);
      return action.events.length === 0
        ? log
        : withEvents(mergeEvents(log.events, action.events), log.baseSeq, log.generation);
    case "earlier":
      // A page for an older base (a reset came in meanwhile) or one that does not reach it is dropped.
      if (action.fromSeq >= log.baseSeq || action.events.some((e) => e.seq > log.baseSeq)) return log;
      return withEvents(mergeEvents(log.events, action.events), action.fromSeq, log.generation);
    case "event":
      return appendLive(log, [action.event]);
    case "events":
      return appendLive(log, action.events);
    case "replace": {
      const events = log.events.map((e) => (e.seq === action.event.seq ? action.event : e));
      return { ...log, events };
    }
  }
}

/**
 * Live facts, in the order they came. The live stream's common case, facts that follow a log
 * without a gap seq by seq, is one append (one copy of the log for the whole batch), without a pass
 * over the log to find its first gap again; anything else goes fact by fact: one already held is
 * dropped, the others merged in seq order.
 */
function appendLive(log: SessionLog, facts: readonly WireEvent[]): SessionLog {
  const last = lastSeqOf(log);
  const follows =
    facts.length > 0 &&
    log.contiguousSeq === last &&
    (log.events.length > 0 || last === log.baseSeq) &&
    facts.every((e, i) => e.seq === last + 1 + i);
  if (follows) return { ...log, events: [...log.events, ...facts], contiguousSeq: facts.at(-1)!.seq };
  if (facts.length !== 1) return facts.reduce((held, fact) => appendLive(held, [fact]), log);
  const fact = facts[0]!;
  if (log.events.length > 0 && fact.seq <= last && hasSeq(log.events, fact.seq)) return log;
  return withEvents(mergeEvents(log.events, [fact]), log.baseSeq, log.generation);
}

/** The highest seq held, gaps or not. */
export function lastSeqOf(log: SessionLog): number {
  return log.events.at(-1)?.seq ?? 0;
}

/** True when the log starts after seq 1: earlier pages can be read (`session:events-before`). */
export function hasEarlier(log: SessionLog): boolean {
  return log.baseSeq > 0;
}

/** True when events after a gap are held: the view should resubscribe from `contiguousSeq`. */
export function hasGap(log: SessionLog): boolean {
  return lastSeqOf(log) > log.contiguousSeq;
}

function withEvents(events: readonly WireEvent[], baseSeq: number, generation: number): SessionLog {
  return { events, contiguousSeq: contiguousOf(events, baseSeq), baseSeq, generation };
}

function mergeEvents(held: readonly WireEvent[], incoming: readonly WireEvent[]): WireEvent[] {
  const last = held.at(-1)?.seq ?? 0;
  // The common case: a fact that follows the log in order.
  if (incoming.length === 1 && incoming[0]!.seq > last) return [...held, incoming[0]!];
  const bySeq = new Map<number, WireEvent>();
  for (const e of held) bySeq.set(e.seq, e);
  // The first copy of a seq wins: the log is append-only, so a later copy is the same event.
  for (const e of incoming) if (!bySeq.has(e.seq)) bySeq.set(e.seq, e);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

function contiguousOf(events: readonly WireEvent[], baseSeq: number): number {
  let expected = baseSeq + 1;
  for (const e of events) {
    if (e.seq < expected) continue;
    if (e.seq !== expected) break;
    expected++;
  }
  return expected - 1;
}

function hasSeq(events: readonly WireEvent[], seq: number): boolean {
  let lo = 0;
  let hi = events.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = events[mid]!.seq;
    if (s === seq) return true;
    if (s < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}
