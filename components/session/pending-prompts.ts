/**
 * The sender's own prompts, shown at Enter: a prompt appears in the conversation the moment it is
 * sent ("sending…"), before the sidecar has logged it, and becomes the logged prompt in place when
 * its event arrives. The logged prompt's row takes the key the pending one had, so the row is kept
 * (only its "sending…" turns into its time): the page draws the echo, and scrolls to it, while
 * the prompt is on its way, not when the CLI starts working on it. A refused prompt disappears
 * (the prompt box shows the error and gives the text back).
 */
import type { ConversationItem } from "./conversation";

type UserItem = Extract<ConversationItem, { kind: "user" }>;

export interface PendingPrompt {
  /** The row's key, kept by the logged prompt: `prompt:<commandId>`. */
  key: string;
  text: string;
  /** Images sent with it (drawn once logged; the echo names how many). */
  imageCount: number;
  author: string;
  authorId: string;
  at: string;
  /** The log's last seq when it was sent: its event comes after. */
  afterSeq: number;
  /**
   * Its event's seq, once the sidecar acknowledged it: set on the entry by the ack, which draws
   * nothing when the event is already shown (the row is matched by author and text then).
   */
  seq?: number;
}

/**
 * `items` with the sender's pending prompts: a logged prompt that is one of them (its acknowledged
 * seq, or before the ack the first later prompt of the same author and text) is shown under the
 * pending one's key, and the others are appended as pending rows. `adopted` holds the keys of
 * prompts already matched (seq → key), so a row keeps its key after its pending entry is gone.
 * `rekeyed` caches the rekeyed objects, so an unchanged item keeps its identity across calls.
 */
export function withPendingPrompts(
  items: ConversationItem[],
  pending: readonly PendingPrompt[],
  adopted: ReadonlyMap<number, string>,
  rekeyed: WeakMap<ConversationItem, ConversationItem>,
): ConversationItem[] {
  if (pending.length === 0 && adopted.size === 0) return items;
  const keys = new Map(adopted);
  const unmatched: PendingPrompt[] = [];
  for (const p of pending) {
    const match = p.seq !== undefined ? findBySeq(items, p.seq) : findUnadopted(items, p, keys);
    if (match) keys.set(match.seq, p.key);
    else unmatched.push(p);
  }
  let changed = unmatched.length > 0;
  const shown = items.map((item) => {
    const key = item.kind === "user" ? keys.get(item.seq) : undefined;
    if (key === undefined || key === item.key) return item;
    changed = true;
    let again = rekeyed.get(item);
    if (again?.key !== key) rekeyed.set(item, (again = { ...item, key }));
    return again;
  });
  if (!changed) return items;
  for (const p of unmatched) shown.push(pendingItem(p));
  return shown;
}

/** The pending prompts whose acknowledged event is in the page's log (their row is the logged one now). */
export function loggedPending(events: readonly { seq: number }[], pending: readonly PendingPrompt[]): PendingPrompt[] {
  return pending.filter((p) => p.seq !== undefined && isLogged(events, p.seq));
}

/** Whether the log (in seq order) holds the event `seq`; looks from its end, where a prompt just sent is. */
export function isLogged(events: readonly { seq: number }[], seq: number): boolean {
  for (let i = events.length - 1; i >= 0 && events[i]!.seq >= seq; i--) if (events[i]!.seq === seq) return true;
  return false;
}

function pendingItem(p: PendingPrompt): UserItem {
  return { kind: "user", key: p.key, seq: -1, text: p.text, author: p.author, authorId: p.authorId, at: p.at, pending: { imageCount: p.imageCount } };
}

function findBySeq(items: readonly ConversationItem[], seq: number): UserItem | undefined {
  // the prompt is near the end: look from there
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.kind === "user" && item.seq === seq) return item;
    if (item.seq >= 0 && item.seq < seq) return undefined;
  }
  return undefined;
}

function findUnadopted(items: readonly ConversationItem[], p: PendingPrompt, keys: ReadonlyMap<number, string>): UserItem | undefined {
  let found: UserItem | undefined;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.seq >= 0 && item.seq <= p.afterSeq) break;
    if (item.kind === "user" && item.authorId === p.authorId && item.text === p.text && !keys.has(item.seq)) found = item;
  }
  return found;
}
