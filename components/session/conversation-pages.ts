"use client";

/**
 * Earlier pages of a long session's log for the conversation view: the page subscribes from the
 * log's tail (`tailAfterSeq`), and scrolling up reads the page before the log's base with
 * `session:events-before` (`server/shared/wire/session-pages.ts`). One read at a time; a failed
 * read says why and can be retried.
 */
import { startTransition, useCallback, useLayoutEffect, useMemo, useRef, useState, type Dispatch } from "react";
import type { Socket } from "socket.io-client";
import type { SessionPageCommand, EventsBeforeResult, tailEvents as TailEvents } from "@/server/shared/wire/session-pages";
import { hasEarlier, type SessionLog, type SessionLogAction } from "./session-log";
import { ackMessage, emitCommand, type CommandName } from "./wire-client";

export const pageCommand = {
  eventsBefore: "session:events-before",
} as const satisfies typeof SessionPageCommand;

/** Events the first subscribe asks for (the contract's `tailEvents`). */
export const tailEvents = 200 as const satisfies typeof TailEvents;

/** The `afterSeq` of a page's first subscribe: the last {@link tailEvents} events of a log ending at `lastSeq`. */
export function tailAfterSeq(lastSeq: number): number {
  return Math.max(0, lastSeq - tailEvents);
}

export interface EarlierPages {
  /** Events before the ones held exist on the server. */
  more: boolean;
  loading: boolean;
  error: string | undefined;
  /** Reads the page before the log's base; a no-op while one is in flight or none is left. */
  load: () => void;
}

export function useEarlierPages(options: {
  socket: Socket | undefined;
  sessionId: string;
  log: SessionLog;
  dispatch: Dispatch<SessionLogAction>;
}): EarlierPages {
  const { socket, sessionId, log, dispatch } = options;
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string>();
  const inFlight = useRef(false);
  /** Pages taken in so far: the next read may start once the last one is in. */
  const [pagesIn, setPagesIn] = useState(0);
  const more = hasEarlier(log);
  const baseSeq = log.baseSeq;
  const load = useCallback(() => {
    if (!socket || !more || inFlight.current) return;
    inFlight.current = true;
    setLoading(true);
    void emitCommand<EventsBeforeResult>(socket, pageCommand.eventsBefore as unknown as CommandName, { sessionId, beforeSeq: baseSeq + 1 }).then((ack) => {
      if (ack.ok) {
        // A page goes in as a transition: React draws it in slices between frames rather than in
        // one long frame of a scroll (the reader is scrolling up towards it). The next read waits
        // until it is in (the effect below), so it starts from the new base.
        startTransition(() => {
          setLoading(false);
          setError(undefined);
          setPagesIn((n) => n + 1);
          dispatch({ type: "earlier", events: ack.data.events, fromSeq: ack.data.fromSeq });
        });
      } else {
        inFlight.current = false;
        setLoading(false);
        setError(ackMessage(ack));
      }
    });
  }, [socket, more, sessionId, baseSeq, dispatch]);
  // A layout effect: it runs before the list's effects of the same commit, which may read on at once.
  useLayoutEffect(() => {
    inFlight.current = false;
  }, [pagesIn]);
  return useMemo(() => ({ more, loading, error, load }), [more, loading, error, load]);
}
