/**
 * The conversation of a session's log, kept up to date as the log grows: when the new log is the
 * old one with events appended (the live stream), only the new events are folded; anything else
 * (earlier pages read above, a trimmed event loaded whole, a reset) folds the log again. The
 * result equals `buildConversation(events)` every time (conversation-incremental.test.ts checks
 * it on random logs); what it saves is the pass over the whole log and, because unchanged items
 * and an unchanged `items` array keep their identity, the re-render of every row.
 */
import type { WireEvent } from "@/server/shared/wire/session";
import { createConversationBuilder, type Conversation, type ConversationBuilder } from "./conversation";

export class IncrementalConversation {
  private builder: ConversationBuilder = createConversationBuilder();
  /** The log the builder has folded, exactly (the builder is the one record of what it holds). */
  private folded: readonly WireEvent[] = [];

  /** The conversation of `events`. */
  update(events: readonly WireEvent[]): Conversation {
    if (events !== this.folded) {
      if (extendsLog(this.folded, events)) {
        this.builder.add(events.slice(this.folded.length));
      } else {
        this.builder = createConversationBuilder();
        this.builder.add(events);
      }
      this.folded = events;
    }
    return this.builder.view();
  }
}

/**
 * `next` is `held` with events appended: the same event objects (the log reducer keeps them) in
 * the same places. A pointer comparison per held event, far below the cost of folding them.
 */
export function extendsLog(held: readonly WireEvent[], next: readonly WireEvent[]): boolean {
  if (next.length < held.length) return false;
  for (let i = held.length - 1; i >= 0; i--) if (held[i] !== next[i]) return false;
  return true;
}
