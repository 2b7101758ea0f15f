import { describe, expect, it } from "vitest";
import type { WireEvent } from "@/server/shared/wire/session";
import { seededRandom } from "@/test/seeded-random";
import { readSessionFacts, SessionFactsFolder } from "./session-facts";

let seq = 0;
const ev = (kind: WireEvent["kind"], payload: unknown, user?: string): WireEvent => ({
  sessionId: "s",
  seq: ++seq,
  kind,
  payload,
  trimmed: false,
  at: "2026-12-01T00:00:00.000Z",
  ...(user ? { user: { id: user, name: user } } : {}),
});
const life = (uuid: string, state: string) => ev("cli", { type: "command_lifecycle", command_uuid: uuid, state });

describe("readSessionFacts", () => {
  it("lists prompts the CLI still holds queued, until they start or are cancelled", () => {
    const events = [
      ev("prompt", { text: "first", uuid: "a" }, "Olga"),
      life("a", "queued"),
      life("a", "started"),
      ev("prompt", { text: "second", uuid: "b", images: [{ id: "i" }] }, "Ed"),
      life("b", "queued"),
      ev("prompt", { text: "third", uuid: "c" }, "Ed"),
      life("c", "queued"),
    ];
    expect(readSessionFacts(events).queued).toEqual([
      { seq: 4, uuid: "b", text: "second", author: "Ed", images: 1 },
      { seq: 6, uuid: "c", text: "third", author: "Ed", images: 0 },
    ]);
    const later = [...events, life("b", "cancelled"), ev("cancel-queued", { uuid: "c", cancelled: true }, "Ed")];
    expect(readSessionFacts(later).queued).toEqual([]);
  });

  it("forgets the queue of a child that exited", () => {
    const events = [ev("prompt", { text: "x", uuid: "q" }), life("q", "queued"), ev("process", { phase: "exited" })];
    expect(readSessionFacts(events).queued).toEqual([]);
  });

  it("takes the slash commands of the latest init and counts results", () => {
    const events = [
      ev("cli", { type: "system", subtype: "init", slash_commands: ["old"] }),
      ev("cli", { type: "result" }),
      ev("cli", { type: "system", subtype: "init", slash_commands: ["compact", "__internal", "clear"] }),
      ev("cli", { type: "result" }),
    ];
    expect(readSessionFacts(events)).toMatchObject({ slashCommandNames: ["compact", "clear"], results: 2 });
  });

  it("keeps the thinking budget and the model last confirmed", () => {
    const events = [
      ev("set-thinking", { maxThinkingTokens: 4000 }),
      ev("cli", { type: "system", subtype: "init", model: "claude-opus-5-5" }),
      ev("set-thinking", { maxThinkingTokens: 9000, error: { code: "x", message: "no" } }),
      ev("set-model", { model: "haiku" }),
      ev("set-model", { model: "nope", error: { code: "x", message: "no" } }),
    ];
    expect(readSessionFacts(events)).toMatchObject({ thinking: 4000, currentModel: "haiku" });
    const later = [...events, ev("set-thinking", { maxThinkingTokens: null }), ev("cli", { type: "system", subtype: "init", model: "claude-haiku-5" })];
    expect(readSessionFacts(later)).toMatchObject({ thinking: null, currentModel: "claude-haiku-5" });
    expect(readSessionFacts([]).thinking).toBeUndefined();
  });
});

describe("SessionFactsFolder", () => {
  const uuids = ["a", "b", "c", "d"];
  const randomEvent = (random: () => number): WireEvent => {
    const pick = <T,>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    const uuid = pick(uuids);
    return pick([
      () => ev("prompt", { text: `p ${uuid}`, uuid }, pick(["Ann", "Bo"])),
      () => life(uuid, pick(["queued", "started", "completed", "cancelled"])),
      () => ev("cancel-queued", { uuid, cancelled: random() < 0.5 }),
      () => ev("cli", { type: "result" }),
      () => ev("cli", { type: "system", subtype: "init", slash_commands: [pick(["a", "b"]), "__x"], model: pick(["m1", "m2"]) }),
      () => ev("process", { phase: pick(["exited", "spawned"]) }),
      () => ev("set-thinking", random() < 0.3 ? { error: { code: "x", message: "no" } } : { maxThinkingTokens: pick([null, 1000, 5000]) }),
      () => ev("set-model", random() < 0.3 ? { model: "bad", error: { code: "x", message: "no" } } : { model: pick(["m3", "m4"]) }),
      () => ev("cli", { type: "stream_event", event: { type: "content_block_delta" } }),
    ])();
  };

  it("folded event by event, equals the whole log folded at once, whatever the log", () => {
    for (let run = 0; run < 40; run++) {
      const random = seededRandom(run + 1);
      const folder = new SessionFactsFolder();
      let log: WireEvent[] = [];
      for (let step = 0; step < 60; step++) {
        // mostly appended events (the live stream), sometimes a log that is not an extension (a reset)
        log = random() < 0.05 ? [randomEvent(random)] : [...log, ...Array.from({ length: 1 + Math.floor(random() * 3) }, () => randomEvent(random))];
        expect(folder.update(log)).toEqual(readSessionFacts(log));
      }
    }
  });

  it("keeps the facts and their arrays while the new events change none of them", () => {
    const folder = new SessionFactsFolder();
    const log = [
      ev("cli", { type: "system", subtype: "init", slash_commands: ["compact"], model: "m" }),
      ev("prompt", { text: "x", uuid: "q" }),
      life("q", "queued"),
    ];
    const first = folder.update(log);
    const delta = ev("cli", { type: "stream_event", event: { type: "content_block_delta" } });
    const withDelta = [...log, delta];
    expect(folder.update(withDelta)).toBe(first);
    // a lifecycle frame that leaves the queue as it was keeps the queue's array
    const requeued = [...withDelta, life("q", "queued")];
    const again = folder.update(requeued);
    expect(again.queued).toBe(first.queued);
    // a start changes it
    const startedLog = [...requeued, life("q", "started")];
    const started = folder.update(startedLog);
    expect(started.queued).toEqual([]);
    expect(started.slashCommandNames).toBe(first.slashCommandNames);
    // every turn starts with an init: one naming the same commands and model keeps the facts
    const reinit = [...startedLog, ev("cli", { type: "system", subtype: "init", slash_commands: ["compact"], model: "m" })];
    expect(folder.update(reinit)).toBe(started);
    const renamed = folder.update([...reinit, ev("cli", { type: "system", subtype: "init", slash_commands: ["compact", "review"], model: "m2" })]);
    expect(renamed.slashCommandNames).toEqual(["compact", "review"]);
    expect(renamed.currentModel).toBe("m2");
  });
});

