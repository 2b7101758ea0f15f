/**
 * The start-up sweep of prompts an earlier sidecar accepted and no CLI answered, on both
 * databases: an undelivered prompt is refused with a notice, a delivered one whose turn never
 * ended is marked interrupted, answered prompts and other sidecars' sessions are left alone, and
 * a second sweep writes nothing (the notices settle their prompts).
 */
import pino from "pino";
import { expect } from "vitest";
import type { Db } from "@/server/db/client";
import { eventLogStoreOf, SessionEventWriter } from "@/server/sidecar/session/session-event-writer";
import { itOnBothProviders } from "@/server/db/test-support";
import { settleUnansweredPrompts } from "./undelivered-prompts";

const log = pino({ level: "silent" });

async function seed(db: Db) {
  const user = await db.user.create({ data: { email: "p@example.test", name: "P" } });
  const workspace = await db.workspace.create({ data: { name: "W", slug: "w", rootPath: "/tmp/w" } });
  const session = (sidecarId: string | null) =>
    db.session.create({ data: { workspaceId: workspace.id, createdById: user.id, sidecarId, status: "running" } });
  return { user, session };
}

function cli(value: unknown) {
  return { kind: "cli", payload: JSON.stringify(value) };
}

async function writeLog(db: Db, sessionId: string, userId: string, events: { kind: string; payload: string }[]) {
  await db.sessionEvent.createMany({
    data: events.map((e, i) => ({
      sessionId,
      seq: i + 1,
      kind: e.kind,
      payload: e.payload,
      ...(e.kind === "prompt" ? { userId, commandId: `c-${sessionId}-${i}` } : {}),
    })),
  });
}

const prompt = (uuid: string) => ({ kind: "prompt", payload: JSON.stringify({ text: `hi ${uuid}`, uuid }) });
const result = (uuids: string[]) =>
  cli({ type: "result", subtype: "success", user_message_uuids: uuids, total_cost_usd: 0 });

itOnBothProviders(
  "settleUnansweredPrompts",
  "refuses undelivered prompts, marks cut-off turns, leaves the rest",
  async (db) => {
    const { user, session } = await seed(db);
    // answered: prompt, result naming it
    const answered = await session("me");
    await writeLog(db, answered.id, user.id, [prompt("u1"), cli({ type: "system", subtype: "init" }), result(["u1"])]);
    // cut off before delivery: an answered turn, then two prompts nothing named (the second queued)
    const lost = await session("me");
    await writeLog(db, lost.id, user.id, [
      prompt("a1"),
      result(["a1"]),
      prompt("a2"),
      { kind: "process", payload: JSON.stringify({ phase: "spawned", pid: 1 }) },
      prompt("a3"),
    ]);
    // delivered, the turn cut off: the CLI's lifecycle line names it, no result
    const cut = await session(null);
    await writeLog(db, cut.id, user.id, [
      prompt("b1"),
      cli({ type: "command_lifecycle", command_uuid: "b1", state: "started" }),
    ]);
    // the CLI crashed visibly after the prompt: already settled
    const crashed = await session("me");
    await writeLog(db, crashed.id, user.id, [
      prompt("c1"),
      { kind: "process", payload: JSON.stringify({ phase: "exited", code: 1 }) },
    ]);
    // another sidecar's session: not ours to settle
    const other = await session("them");
    await writeLog(db, other.id, user.id, [prompt("d1")]);

    const writer = new SessionEventWriter(eventLogStoreOf(db), log);
    const notices = await settleUnansweredPrompts({ db, writer, sidecarId: "me", log });
    expect(notices.map((n) => [n.phase, n.promptUuid]).sort()).toEqual([
      ["prompt-refused", "a2"],
      ["prompt-refused", "a3"],
      ["turn-interrupted", "b1"],
    ]);
    const tail = async (sessionId: string) =>
      (await db.sessionEvent.findMany({ where: { sessionId }, orderBy: { seq: "asc" } })).map((e) => ({
        seq: e.seq,
        kind: e.kind,
        payload: JSON.parse(e.payload) as Record<string, unknown>,
      }));
    const lostLog = await tail(lost.id);
    expect(lostLog.slice(5)).toEqual([
      {
        seq: 6,
        kind: "process",
        payload: expect.objectContaining({
          phase: "prompt-refused",
          promptSeq: 3,
          promptUuid: "a2",
          reason: expect.stringMatching(/not delivered/),
        }),
      },
      {
        seq: 7,
        kind: "process",
        payload: expect.objectContaining({ phase: "prompt-refused", promptSeq: 5, promptUuid: "a3" }),
      },
    ]);
    expect((await tail(cut.id)).at(-1)).toMatchObject({ seq: 3, payload: { phase: "turn-interrupted", promptSeq: 1 } });
    expect(await tail(answered.id)).toHaveLength(3);
    expect(await tail(crashed.id)).toHaveLength(2);
    expect(await tail(other.id)).toHaveLength(1);

    // settled now: a second start writes nothing
    expect(await settleUnansweredPrompts({ db, writer, sidecarId: "me", log })).toEqual([]);
    await writer.close();
  },
);
