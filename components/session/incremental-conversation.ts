/**
 * The conversation of a session's log, kept up to date as the log grows: when the new log is the
 * old one with events appended (the live stream), only the new events are folded; anything else
 * (earlier pages read above, a trimmed event loaded whole, a reset) folds the log again. The
 * result equals `buildConversation(events)` every time (conversation-incremental.test.ts checks
 * it on random logs); what it saves is the pass over the whole log and, because unchanged items
 * and an unchanged `items` array keep their identity (across a fold of the whole log too), the
 * re-render of every row.
 */
import type { WireEvent } from "@/server/shared/wire/session";
import { createConversationBuilder, type Conversation, type ConversationBuilder, type ConversationItem } from "./conversation";

export class IncrementalConversation {
  private builder: ConversationBuilder = createConversationBuilder();
  /** The log the builder has folded, exactly (the builder is the one record of what it holds). */
  private folded: readonly WireEvent[] = [];
  /**
   * After a fold of the whole log, the object shown for each of the builder's items that equals
   * an item shown before it (same key, same content): the shown one, so its row skips its render.
   * Keyed by the builder's own objects (the builder keeps replacing them by identity).
   */
  private shownFor = new WeakMap<ConversationItem, ConversationItem>();
  /** The builder's last view and what was returned for it. */
  private last: { from: Conversation; shown: Conversation } | undefined;

  /** The conversation of `events`. */
  update(events: readonly WireEvent[]): Conversation {
    if (events !== this.folded) {
      if (extendsLog(this.folded, events)) {
        this.builder.add(events.slice(this.folded.length));
      } else {
        // Earlier pages read, a trimmed event loaded whole, a reset: fold the log again, and keep
        // showing the items that came out the same (a page read above leaves the rows below as
        // they were; without this every row on screen rendered again).
        const before = new Map((this.last?.shown.items ?? []).map((item) => [item.key, item]));
        this.builder = createConversationBuilder();
        this.builder.add(events);
        this.shownFor = new WeakMap();
        for (const item of this.builder.view().items) {
          const old = before.get(item.key);
          if (old && sameValue(old, item, 0)) this.shownFor.set(item, old);
        }
      }
      this.folded = events;
    }
    const view = this.builder.view();
    if (this.last?.from === view) return this.last.shown;
    // the items array keeps its identity while only streamed text changed: so does ours
    const items =
      this.last && this.last.from.items === view.items ? this.last.shown.items : view.items.map((item) => this.shownFor.get(item) ?? item);
    const shown = items === view.items || items.every((item, i) => item === view.items[i]) ? view : { ...view, items };
    this.last = { from: view, shown };
    return shown;
  }
}

/** How deep {@link sameValue} looks before calling two values different (items are shallow). */
const maxDepth = 8;

/** Equal JSON-like values: the same object, or the same keys with equal values. */
function sameValue(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || depth >= maxDepth) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], depth + 1)) return false;
  }
  return true;
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
