/**
 * Live events on their way to a session's room, sent once per burst instead of once per event.
 * The event writer commits a batch of lines (a burst of streamed deltas is often dozens of events
 * of one session in one statement) and reports them one by one in one synchronous pass; each
 * event sent alone is a WebSocket message that every watching page takes as a task of its own
 * (0.5–1 ms each in Chromium here), and a packet for the sidecar, the edge and Redis. The outbox
 * holds a session's events until the pass ends (a microtask) and sends them as one
 * `session:events` message (`session:event` when there is one), in seq order, at most
 * {@link maxEventsPerMessage} a message.
 *
 * Owns: the events not yet sent. Must not: reorder a session's events, or hold one past the
 * current task. Whatever else goes to the same room about the session (its status) calls
 * {@link EventOutbox.flush} first, so it still follows the events that caused it.
 */
import type { WireEvent } from "@/server/shared/wire/session";

/** Most events in one message (a flush can commit 500; each is trimmed for the wire already). */
export const maxEventsPerMessage = 100;

export class EventOutbox {
  private readonly pending = new Map<string, WireEvent[]>();
  private scheduled = false;

  /**
   * `send` gets one session's events, one or more, in the order they were pushed; what it throws
   * goes to `onError` (a send at the end of the pass has no caller to take it), and the next
   * message is still sent.
   */
  constructor(
    private readonly send: (sessionId: string, events: readonly WireEvent[]) => void,
    private readonly onError: (err: unknown, sessionId: string) => void,
  ) {}

  push(event: WireEvent): void {
    const held = this.pending.get(event.sessionId);
    if (held) held.push(event);
    else this.pending.set(event.sessionId, [event]);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => {
        this.scheduled = false;
        this.flushAll();
      });
    }
  }

  /** Sends what is held for `sessionId` now. */
  flush(sessionId: string): void {
    const held = this.pending.get(sessionId);
    if (!held) return;
    this.pending.delete(sessionId);
    for (let i = 0; i < held.length; i += maxEventsPerMessage) {
      try {
        this.send(sessionId, held.slice(i, i + maxEventsPerMessage));
      } catch (err) {
        this.onError(err, sessionId);
      }
    }
  }

  /** Sends everything held. */
  flushAll(): void {
    for (const sessionId of [...this.pending.keys()]) this.flush(sessionId);
  }
}
