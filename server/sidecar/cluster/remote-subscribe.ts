/**
 * Catch-up for a subscriber on a node that does not run the session. Its events come from the
 * owner through the Socket.IO Redis adapter, and this node cannot capture them as the local hub
 * does (the hub's catch-up trusts a sequence it moves itself). So the order is reversed: the
 * socket joins the session's room first, then the log is read. Every event the owner emits
 * after the join reaches the socket through the room; every event emitted before the join was
 * committed before it (the owner emits only stored events), hence before the read, hence in
 * the page. Nothing is missed; an event may come twice (in the page and live), and the browser's
 * log keeps each seq once (`components/session/session-log.ts`).
 *
 * Owns: the remote catch-up. Must not: authorize (the socket layer did), or touch the hub's entries.
 */
import type { Db } from "@/server/db/client";
import { lastSessionSeq, listSessionEventPage, type EventPageLimits } from "@/server/db/session-events";
import { findUserNames } from "@/server/db/sessions";
import { subscribePage, type SessionView, type WireEvent } from "@/server/shared/wire/session";
import type { SubscribeSnapshot } from "@/server/sidecar/session/session-hub-types";
import { toWireEvent } from "@/server/db/session-wire-event";
import type { ClusterDirectory } from "./cluster-directory";

export interface RemoteSubscribeDeps {
  db: Db;
  directory: ClusterDirectory;
  /** The session's view from its owner. */
  view: (sessionId: string) => Promise<SessionView>;
  pageLimits?: EventPageLimits;
}

export interface RemoteSubscriptions {
  /**
   * When another node runs the session: calls `join` (the socket enters the room), reads one page
   * after `afterSeq` and hands it to `deliver`, and answers true. Answers false, having done
   * nothing, when this node runs the session or nobody does (the local hub's catch-up applies).
   */
  subscribe(
    sessionId: string,
    afterSeq: number,
    join: () => Promise<void> | void,
    deliver: (snapshot: SubscribeSnapshot) => void,
  ): Promise<boolean>;
}

export function createRemoteSubscriptions(deps: RemoteSubscribeDeps): RemoteSubscriptions {
  const limits = deps.pageLimits ?? subscribePage;
  return {
    async subscribe(sessionId, afterSeq, join, deliver) {
      const owner = await deps.directory.ownerOf(sessionId);
      if (owner === null || owner === deps.directory.selfId) return false;
      await join();
      // The view first: an event it already counts is also in the page read after it.
      const session = await deps.view(sessionId);
      const last = await lastSessionSeq(deps.db, sessionId);
      const reset = afterSeq > last;
      const from = reset ? 0 : afterSeq;
      const page = await listSessionEventPage(deps.db, sessionId, from, limits);
      const names = await findUserNames(deps.db, [
        ...new Set(page.rows.map((r) => r.userId).filter((id): id is string => id !== null)),
      ]);
      const events: WireEvent[] = page.rows.map((row) =>
        toWireEvent(row, { userName: row.userId === null ? undefined : names.get(row.userId) }),
      );
      const nextAfterSeq = events.at(-1)?.seq ?? from;
      deliver({ session, events, reset, hasMore: page.more, nextAfterSeq });
      return true;
    },
  };
}
