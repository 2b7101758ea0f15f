"use client";

/**
 * A session's live log in the page: the subscribe protocol (a backlog in pages, then the live
 * stream, again from the last seq held on every reconnect and after a gap), live events applied
 * once per frame, and the facts beside the log (status, presence, removal). The session view
 * draws what this holds; `conversation-pages.ts` reads earlier pages into the same log.
 */
import { flushSync } from "react-dom";
import { useCallback, useEffect, useReducer, useRef, useState, type Dispatch, type RefObject } from "react";
import type { Socket } from "socket.io-client";
import type { PresenceChanged, SessionView as SessionInfo, SubscribeResult, Viewer, WireEvent } from "@/server/shared/wire/session";
import type { SessionRemoved } from "@/server/shared/wire/session-manage";
import { tailAfterSeq } from "./conversation-pages";
import { createFrameBatcher } from "./frame-batcher";
import { appliedWithLatency, markLatency } from "./latency-marks";
import { emptySessionLog, hasGap, reduceSessionLog, type SessionLog, type SessionLogAction } from "./session-log";
import { ackMessage, command, emitCommand, fact } from "./wire-client";

type StatusFact = Partial<SessionInfo> & { sessionId?: string };

export interface SessionStream {
  log: SessionLog;
  dispatch: Dispatch<SessionLogAction>;
  /** The latest log, for callbacks that must not change identity with it. */
  logRef: RefObject<SessionLog>;
  /** The session as the last subscribe reply and status facts have it. */
  info: SessionInfo;
  viewers: Viewer[];
  /** The live stream flows (the last page of the backlog is in). */
  subscribed: boolean;
  subscribeError: string | undefined;
  /** Subscribes again (a Retry after an error). */
  resubscribe: () => void;
  /** Set when an owner archived or deleted the session. */
  removed: (SessionRemoved & { archived?: boolean }) | undefined;
}

export function useSessionStream(socket: Socket | undefined, initialSession: SessionInfo): SessionStream {
  const sessionId = initialSession.id;
  const [log, dispatch] = useReducer(reduceSessionLog, emptySessionLog);
  const [info, setInfo] = useState(initialSession);
  const [viewers, setViewers] = useState<Viewer[]>([]);
  const [subscribed, setSubscribed] = useState(false);
  const [subscribeError, setSubscribeError] = useState<string>();
  const [removed, setRemoved] = useState<SessionRemoved & { archived?: boolean }>();
  const logRef = useRef(log);
  const resubscribe = useRef<() => void>(() => undefined);
  // A long log opens at its tail; earlier pages load on scroll up (conversation-pages.ts).
  const tailFrom = useRef(tailAfterSeq(initialSession.lastSeq));

  useEffect(() => {
    logRef.current = log;
  }, [log]);

  // Subscribe on every (re)connect, from the last seq held without a gap; facts that overlap
  // the reply are dropped by the reducer (keyed by seq), so nothing shows twice.
  useEffect(() => {
    if (!socket) return;
    let alive = true;
    let inFlight = false;
    let again = false;
    // Live facts are applied once per frame (a streamed reply is a message per delta), rendered
    // at once in the frame's rAF, so that frame draws them: a plain dispatch there would render
    // in a task after the frame and show a frame later.
    const live = createFrameBatcher<WireEvent>((events) =>
      appliedWithLatency(events, () => flushSync(() => dispatch({ type: "events", events }))),
    );
    const subscribe = async () => {
      if (inFlight) {
        again = true;
        return;
      }
      inFlight = true;
      do {
        again = false;
        // A long backlog comes in pages; each page but the last leaves this socket out of the
        // session's room, so the next page starts where this one ended (the log may not have
        // re-rendered yet), and the last page brings the live stream with it.
        let afterSeq = logRef.current.events.length === 0 ? tailFrom.current : logRef.current.contiguousSeq;
        const from = afterSeq;
        for (;;) {
          const ack = await emitCommand<SubscribeResult>(socket, command.subscribe, { sessionId, afterSeq });
          if (!alive) return;
          if (!ack.ok) {
            setSubscribeError(ackMessage(ack));
            break;
          }
          // the facts held so far go first, as they came first
          live.flush();
          dispatch({ type: "snapshot", events: ack.data.events, reset: ack.data.reset, from });
          setInfo(ack.data.session);
          setViewers(ack.data.viewers);
          setSubscribeError(undefined);
          if (!ack.data.hasMore) {
            setSubscribed(true);
            break;
          }
          afterSeq = ack.data.nextAfterSeq;
        }
      } while (again && alive);
      inFlight = false;
    };
    resubscribe.current = () => void subscribe();
    const onConnect = () => void subscribe();
    const onDisconnect = () => setSubscribed(false);
    const onEvent = (event: WireEvent) => {
      if (event.sessionId !== sessionId) return;
      markLatency("event-received", event.seq);
      live.push(event);
    };
    // a burst the sidecar committed together comes as one message (wire/session.ts)
    const onEvents = (events: WireEvent[]) => {
      for (const event of events) onEvent(event);
    };
    const onStatus = (payload: StatusFact) => {
      const id = payload.id ?? payload.sessionId;
      if (id !== sessionId) return;
      const { sessionId: _omit, ...fields } = payload;
      setInfo((current) => ({ ...current, ...fields, id: sessionId }));
    };
    const onPresence = (payload: PresenceChanged) => {
      if (payload.sessionId === sessionId) setViewers(payload.viewers);
    };
    socket.on("connect", onConnect);
    socket.on("disconnect", onDisconnect);
    socket.on(fact.event, onEvent);
    socket.on(fact.events, onEvents);
    socket.on(fact.status, onStatus);
    socket.on(fact.presence, onPresence);
    const onRemoved = (payload: SessionRemoved & { archived?: boolean }) => {
      if (payload.sessionId === sessionId) setRemoved(payload);
    };
    socket.on("session:removed", onRemoved);
    if (socket.connected) void subscribe();
    return () => {
      alive = false;
      live.cancel();
      resubscribe.current = () => undefined;
      socket.off("connect", onConnect);
      socket.off("disconnect", onDisconnect);
      socket.off(fact.event, onEvent);
      socket.off(fact.events, onEvents);
      socket.off(fact.status, onStatus);
      socket.off(fact.presence, onPresence);
      socket.off("session:removed", onRemoved);
      if (socket.connected) socket.emit(command.unsubscribe, { sessionId });
    };
  }, [socket, sessionId]);

  // A fact after a gap means events were missed (or are still in the subscribe reply):
  // give the reply a moment, then ask for what follows the gap.
  useEffect(() => {
    if (!hasGap(log)) return;
    const t = setTimeout(() => resubscribe.current(), 400);
    return () => clearTimeout(t);
  }, [log]);

  const retry = useCallback(() => resubscribe.current(), []);
  return {
    log,
    dispatch,
    logRef,
    info,
    viewers,
    subscribed,
    subscribeError,
    resubscribe: retry,
    removed,
  };
}
