/**
 * Who is viewing which session: the sockets subscribed to it, reduced to distinct people (one
 * person with three tabs is one viewer). Each change answers with the new list only when the
 * set of people changed, so a second tab or a resubscribe announces nothing.
 */
import type { Viewer } from "@/server/shared/wire/session";

/** The viewers of one session after a change. */
export interface PresenceUpdate {
  sessionId: string;
  viewers: Viewer[];
  /** The set of people differs from before the change. */
  changed: boolean;
}

/** Viewers per session, by socket. */
export class SessionPresence {
  private readonly sockets = new Map<string, Map<string, Viewer>>();

  /** Adds a socket as a viewer of a session (again is a no-op). */
  join(sessionId: string, socketId: string, viewer: Viewer): PresenceUpdate {
    const before = this.viewers(sessionId);
    let bySocket = this.sockets.get(sessionId);
    if (!bySocket) {
      bySocket = new Map();
      this.sockets.set(sessionId, bySocket);
    }
    bySocket.set(socketId, viewer);
    return this.update(sessionId, before);
  }

  /** Removes a socket from a session's viewers. */
  leave(sessionId: string, socketId: string): PresenceUpdate {
    const before = this.viewers(sessionId);
    const bySocket = this.sockets.get(sessionId);
    bySocket?.delete(socketId);
    if (bySocket?.size === 0) this.sockets.delete(sessionId);
    return this.update(sessionId, before);
  }

  /** Removes a socket from every session (it disconnected); returns the sessions whose viewers changed. */
  leaveAll(socketId: string): PresenceUpdate[] {
    const updates: PresenceUpdate[] = [];
    for (const [sessionId, bySocket] of [...this.sockets]) {
      if (!bySocket.has(socketId)) continue;
      const update = this.leave(sessionId, socketId);
      if (update.changed) updates.push(update);
    }
    return updates;
  }

  /** Distinct viewers of a session, in the order they arrived. */
  viewers(sessionId: string): Viewer[] {
    const distinct = new Map<string, Viewer>();
    for (const viewer of this.sockets.get(sessionId)?.values() ?? []) {
      if (!distinct.has(viewer.userId)) distinct.set(viewer.userId, viewer);
    }
    return [...distinct.values()];
  }

  /** Forgets everyone. */
  clear(): void {
    this.sockets.clear();
  }

  private update(sessionId: string, before: Viewer[]): PresenceUpdate {
    const viewers = this.viewers(sessionId);
    const ids = (list: Viewer[]) =>
      list
        .map((v) => v.userId)
        .sort()
        .join("\u0000");
    return { sessionId, viewers, changed: ids(before) !== ids(viewers) };
  }
}
