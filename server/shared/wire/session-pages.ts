/**
 * Paging of a session's event log for long sessions: the page opens at the log's tail
 * (`session:subscribe` from `tailAfterSeq`), and earlier pages are read on scroll up with
 * `session:events-before`. Members read; nothing here changes a session.
 */
import { z } from "zod";
import type { WireEvent } from "./session";

export const SessionPageCommand = {
  /** The page of events just before `beforeSeq`. */
  eventsBefore: "session:events-before",
} as const;

/** How many events the session page subscribes for first: the last screen, not the whole log. */
export const tailEvents = 200;

/** The `afterSeq` of a page's first subscribe: the last {@link tailEvents} events of a log ending at `lastSeq`. */
export function tailAfterSeq(lastSeq: number): number {
  return Math.max(0, lastSeq - tailEvents);
}

export const ZEventsBefore = z.object({
  sessionId: z.string().min(1).max(64),
  beforeSeq: z.number().int().min(1),
});
export type EventsBefore = z.infer<typeof ZEventsBefore>;

/**
 * Reply to `session:events-before`: every event with `fromSeq < seq < beforeSeq`, in seq order
 * (none left out, payloads over the wire limit trimmed as in a subscribe). `fromSeq` is 0 when
 * the page reaches the log's start.
 */
export interface EventsBeforeResult {
  events: WireEvent[];
  fromSeq: number;
}
