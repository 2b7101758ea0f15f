/**
 * Earlier pages of a session's event log (`session:events-before`), for a page that opened at
 * the log's tail. Read straight from the store: events before a subscriber's first seq are
 * committed and announced already, so no capture of live events is needed here.
 */
import type { Db } from "@/server/db/client";
import { listSessionEventPageBefore, type EventPageLimits } from "@/server/db/session-events";
import { subscribePage } from "@/server/shared/wire/session";
import type { EventsBeforeResult } from "@/server/shared/wire/session-pages";
import { toWireEvent } from "@/server/db/session-wire-event";

/** The page of events just before `beforeSeq`: consecutive rows, trimmed for the wire, with their senders' names. */
export async function readEventsBefore(
  db: Db,
  sessionId: string,
  beforeSeq: number,
  limits: EventPageLimits = subscribePage,
): Promise<EventsBeforeResult> {
  const page = await listSessionEventPageBefore(db, sessionId, beforeSeq, limits);
  const ids = [...new Set(page.rows.flatMap((r) => (r.userId ? [r.userId] : [])))];
  const names = new Map<string, string>();
  if (ids.length > 0) {
    const users = await db.user.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } });
    for (const u of users) names.set(u.id, u.name);
  }
  const events = page.rows.map((row) => toWireEvent(row, { userName: row.userId ? names.get(row.userId) : undefined }));
  // The rows run without a hole from the first one up to beforeSeq: the page covers (first - 1, beforeSeq).
  const fromSeq = page.more && events.length > 0 ? events[0]!.seq - 1 : 0;
  return { events, fromSeq };
}
