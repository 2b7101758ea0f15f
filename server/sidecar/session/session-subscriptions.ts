/**
 * Fan-out and catch-up: who hears of a session's events and status changes, and how a subscriber
 * reads the backlog and joins the live stream with no event missed or doubled.
 *
 * Owns: the event and status listeners, `entry.captures`, `entry.lastNotifiedSeq` (moved on as
 * each stored event is announced), reading pages and single events of the log. Must not: append
 * to the log, decide who may read (the socket layer authorizes), or await between the last page
 * read and `deliver` (see `subscribe`).
 */
import type { Db } from "@/server/db/client";
import {
  findSessionEvent,
  listSessionEventPage,
  sessionEventSize,
  type EventPageLimits,
} from "@/server/db/session-events";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { maxFetchEventChars, subscribePage, type SessionView, type WireEvent } from "@/server/shared/wire/session";
import { viewOf, type SessionEntry } from "./session-entry";
import type { SessionEventLog } from "./session-event-log";
import type { StoredEvent } from "./session-event-writer";
import type { SubscribeSnapshot } from "./session-hub-types";
import { toWireEvent } from "@/server/db/session-wire-event";

export interface SessionSubscriptionsDeps {
  db: Db;
  events: SessionEventLog;
  /** The entry of a session this hub holds, if it holds it. */
  known: (sessionId: string) => SessionEntry | undefined;
  /** The entry of a session, loaded when needed. */
  entry: (sessionId: string) => Promise<SessionEntry>;
  /** Page size of `subscribe`; defaults to the wire contract's `subscribePage`. */
  subscribePage?: EventPageLimits | undefined;
}

export class SessionSubscriptions {
  private readonly eventListeners = new Set<(event: WireEvent) => void>();
  private readonly statusListeners = new Set<(view: SessionView) => void>();

  constructor(private readonly deps: SessionSubscriptionsDeps) {}

  /** Called with every event once it is in the log, in `seq` order per session. */
  onDidEmitEvent(listener: (event: WireEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Called when a session's status, mode, model, title or figures change. */
  onDidChangeStatus(listener: (view: SessionView) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /**
   * Reads one page of the log after `afterSeq` (or from the start, flagged `reset`, when the
   * client is ahead) and hands it to `deliver`. A page that is not the last (`hasMore`) is only
   * a page: the caller stays out of the session's room and asks for the next one. The last page
   * is the catch-up: `deliver` must join the room synchronously; events stored while the page
   * was read are merged in, events stored later reach the room, none twice.
   */
  async subscribe(sessionId: string, afterSeq: number, deliver: (snapshot: SubscribeSnapshot) => void): Promise<void> {
    const entry = await this.deps.entry(sessionId);
    const captured: WireEvent[] = [];
    entry.captures.add(captured);
    try {
      const reset = afterSeq > entry.lastNotifiedSeq;
      const from = reset ? 0 : afterSeq;
      const page = await listSessionEventPage(this.deps.db, sessionId, from, this.deps.subscribePage ?? subscribePage);
      await this.deps.events.learnNames(page.rows);
      // From here to deliver() nothing awaits. Every event up to lastNotifiedSeq was either
      // committed before the read (in the page, or in a later page when `more`) or announced
      // after the capture began (in `captured`); later ones go to the room deliver() joins.
      // Rows past lastNotifiedSeq are committed but not yet announced: they will reach the
      // room, so they are left out here.
      const upTo = entry.lastNotifiedSeq;
      const events: WireEvent[] = [];
      for (const row of page.rows) {
        if (row.seq > upTo) break;
        events.push(toWireEvent(row, { userName: this.deps.events.nameOf(row.userId) }));
      }
      let last = events.at(-1)?.seq ?? from;
      // More rows follow this page in the log: the client reads them before it joins, and
      // whatever was captured meanwhile is in those rows.
      const hasMore = page.more && last < upTo;
      if (!hasMore) {
        for (const event of captured) {
          if (event.seq > last) {
            events.push(event);
            last = event.seq;
          }
        }
      }
      deliver({ session: viewOf(entry), events, reset, hasMore, nextAfterSeq: last });
    } finally {
      entry.captures.delete(captured);
    }
  }

  /** One event with its whole payload, up to `maxFetchEventChars` (the download has the rest). */
  async fetchEvent(sessionId: string, seq: number): Promise<WireEvent> {
    const size = await sessionEventSize(this.deps.db, sessionId, seq);
    if (size === undefined) throw new AppError(ErrorCode.notFound, `This session has no event ${seq}.`);
    if (size > maxFetchEventChars) {
      throw new AppError(
        ErrorCode.invalidPayload,
        `Event ${seq} is too large to show whole here (${(size / 1024 / 1024).toFixed(1)} M characters; at most ${maxFetchEventChars / 1024 / 1024} M). Download the session's log from the raw tab to read it.`,
      );
    }
    const row = await findSessionEvent(this.deps.db, sessionId, seq);
    if (!row) throw new AppError(ErrorCode.notFound, `This session has no event ${seq}.`);
    await this.deps.events.learnNames([row]);
    return toWireEvent(row, { whole: true, userName: this.deps.events.nameOf(row.userId) });
  }

  /** Tells listeners the session's view, after the events appended so far. */
  emitStatus(entry: SessionEntry): void {
    void entry.tail.then(() => {
      const view = viewOf(entry);
      for (const listener of this.statusListeners) listener(view);
    });
  }

  /** An event is in the log: catching-up subscribers collect it, then every listener hears of it. */
  onStored(stored: StoredEvent): void {
    const entry = this.deps.known(stored.record.sessionId);
    const event = toWireEvent(stored.record, { value: stored.value, userName: this.deps.events.nameOf(stored.record.userId) });
    if (entry) {
      entry.lastNotifiedSeq = stored.record.seq;
      for (const captured of entry.captures) captured.push(event);
    }
    for (const listener of this.eventListeners) listener(event);
  }
}
