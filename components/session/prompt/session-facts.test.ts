import { describe, expect, it } from "vitest";
import type { WireEvent } from "@/server/shared/wire/session";
import { readSessionFacts } from "./session-facts";

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
});
