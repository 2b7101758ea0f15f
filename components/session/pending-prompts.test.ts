import { describe, expect, it } from "vitest";
import type { WireEvent } from "@/server/shared/wire/session";
import { buildConversation, type ConversationItem } from "./conversation";
import { isLogged, loggedPending, withPendingPrompts, type PendingPrompt } from "./pending-prompts";
import { ev } from "./test-support";

const ada = { id: "u-ada", name: "Ada" };
const bea = { id: "u-bea", name: "Bea" };
const prompt = (seq: number, text: string, user = ada): WireEvent => ({ ...ev(seq, "prompt", { text, uuid: `p${seq}` }), user });
const pendingOf = (text: string, afterSeq: number, extra: Partial<PendingPrompt> = {}): PendingPrompt => ({
  key: `prompt:${text}-${afterSeq}`,
  text,
  imageCount: 0,
  author: ada.name,
  authorId: ada.id,
  at: "2026-12-03T23:00:00.000Z",
  afterSeq,
  ...extra,
});
const keysOf = (items: readonly ConversationItem[]) => items.map((i) => `${i.kind}:${i.key}${i.kind === "user" && i.pending ? " (pending)" : ""}`);

describe("withPendingPrompts", () => {
  it("shows a prompt at Enter, then its logged event under the same key", () => {
    const before = buildConversation([prompt(1, "first")]).items;
    const sent = pendingOf("second", 1);
    const rekeyed = new WeakMap<ConversationItem, ConversationItem>();

    const sending = withPendingPrompts(before, [sent], new Map(), rekeyed);
    expect(keysOf(sending)).toEqual(["user:1", `user:${sent.key} (pending)`]);
    expect(sending[1]).toMatchObject({ kind: "user", text: "second", author: "Ada", seq: -1 });

    // the event arrives before the ack: matched by author and text after the seq it was sent at
    const logged = buildConversation([prompt(1, "first"), prompt(2, "second")]).items;
    const shown = withPendingPrompts(logged, [sent], new Map(), rekeyed);
    expect(keysOf(shown)).toEqual(["user:1", `user:${sent.key}`]);
    expect(shown[1]).toMatchObject({ seq: 2, text: "second" });
    // the same items again: the same objects (rows skip their render)
    const again = withPendingPrompts(logged, [sent], new Map(), rekeyed);
    expect(again[1]).toBe(shown[1]);
    expect(again[0]).toBe(logged[0]);
  });

  it("matches by the acknowledged seq once known, and leaves another author's prompt alone", () => {
    const sent = pendingOf("same", 1, { seq: 3 });
    const items = buildConversation([prompt(1, "x"), prompt(2, "same", bea), prompt(3, "same")]).items;
    const shown = withPendingPrompts(items, [sent], new Map(), new WeakMap());
    expect(keysOf(shown)).toEqual(["user:1", "user:2", `user:${sent.key}`]);
  });

  it("takes the earliest matching prompt for the earliest pending one, one prompt each", () => {
    const a = pendingOf("yes", 0, { key: "prompt:a" });
    const b = pendingOf("yes", 0, { key: "prompt:b" });
    const one = buildConversation([prompt(1, "yes")]).items;
    expect(keysOf(withPendingPrompts(one, [a, b], new Map(), new WeakMap()))).toEqual(["user:prompt:a", "user:prompt:b (pending)"]);
    const two = buildConversation([prompt(1, "yes"), prompt(2, "yes")]).items;
    expect(keysOf(withPendingPrompts(two, [a, b], new Map(), new WeakMap()))).toEqual(["user:prompt:a", "user:prompt:b"]);
  });

  it("does not take a prompt logged before it was sent", () => {
    const sent = pendingOf("again", 1);
    const items = buildConversation([prompt(1, "again")]).items;
    expect(keysOf(withPendingPrompts(items, [sent], new Map(), new WeakMap()))).toEqual(["user:1", `user:${sent.key} (pending)`]);
  });

  it("keeps an adopted key after the pending entry is gone, and returns the items as they are with nothing to do", () => {
    const items = buildConversation([prompt(1, "a"), prompt(2, "b")]).items;
    expect(withPendingPrompts(items, [], new Map(), new WeakMap())).toBe(items);
    expect(keysOf(withPendingPrompts(items, [], new Map([[2, "prompt:b"]]), new WeakMap()))).toEqual(["user:1", "user:prompt:b"]);
  });

  it("names the pending prompts whose acknowledged event is logged", () => {
    const events = [prompt(1, "a"), prompt(2, "b"), ev(4, "cli", { type: "result" })];
    const acked = pendingOf("b", 1, { seq: 2 });
    const waiting = pendingOf("c", 2, { seq: 3 });
    const unacked = pendingOf("a", 0);
    expect(loggedPending(events, [acked, waiting, unacked])).toEqual([acked]);
    expect(isLogged(events, 4)).toBe(true);
    expect(isLogged(events, 3)).toBe(false);
    expect(isLogged(events, 5)).toBe(false);
    expect(isLogged([], 1)).toBe(false);
  });
});
