// The session statements written as one raw statement each, on both providers: the role check's
// read (the same answer, field for field and type for type, as Prisma's relation select) and the
// history search column (texts joined by a newline and lower-cased, capped, a column at its cap
// left as it is), and the failure noted after a logged command.
import { expect } from "vitest";
import type { Db } from "./client";
import { commandFailurePayload, findCommandFailure, insertSessionEvents } from "./session-events";
import { findSession, findSessionAccess, SEARCH_TEXT_MAX_CHARS, updateSessionLive } from "./sessions";
import { itOnBothProviders } from "./test-support";
import { insertTurnChange, listTurnChanges } from "./turn-changes";

async function newSession(db: Db): Promise<string> {
  const user = await db.user.create({ data: { email: `u${Math.random()}@example.com`, name: "U" } });
  const ws = await db.workspace.create({
    data: { name: "W", slug: `w${Date.now()}${Math.random()}`.replace(".", ""), rootPath: "/srv/w" },
  });
  const session = await db.session.create({ data: { workspaceId: ws.id, createdById: user.id, status: "idle" } });
  return session.id;
}

const searchTextOf = async (db: Db, id: string) =>
  (await db.session.findUniqueOrThrow({ where: { id }, select: { searchText: true } })).searchText;

itOnBothProviders(
  "updateSessionLive with search text",
  "joins texts by a newline, lower-cased, stops at the cap, and writes the live fields all the same",
  async (db) => {
    const id = await newSession(db);
    const append = (text: string, status = "idle") => updateSessionLive(db, id, { status }, text);
    const before = (await db.session.findUniqueOrThrow({ where: { id }, select: { updatedAt: true } })).updatedAt;
    await append("Fix the Parser", "running");
    await append("Done: the PARSER handles ünïcode");
    expect(await searchTextOf(db, id)).toBe("fix the parser\ndone: the parser handles ünïcode");
    const after = await db.session.findUniqueOrThrow({ where: { id }, select: { updatedAt: true, status: true } });
    expect(after.updatedAt.getTime()).toBeGreaterThanOrEqual(before.getTime());
    expect(after.status).toBe("idle");

    // without text (or with none), the column is left as it is
    await updateSessionLive(db, id, { status: "running" });
    await updateSessionLive(db, id, { status: "running" }, "");
    expect(await searchTextOf(db, id)).toBe("fix the parser\ndone: the parser handles ünïcode");

    // filled past the cap: cut at the cap
    await append("x".repeat(SEARCH_TEXT_MAX_CHARS));
    const capped = await searchTextOf(db, id);
    expect(capped).toHaveLength(SEARCH_TEXT_MAX_CHARS);
    expect(capped!.startsWith("fix the parser\ndone: the parser handles ünïcode\nxxx")).toBe(true);
    // at the cap: nothing more is added, and the live fields are still written
    await append("more", "stopped");
    expect(await searchTextOf(db, id)).toBe(capped);
    expect((await db.session.findUniqueOrThrow({ where: { id }, select: { status: true } })).status).toBe("stopped");

    // a session that does not exist: nothing happens, nothing throws
    await updateSessionLive(db, "no-such-session", { status: "idle" }, "text");
  },
);

/** The answer through Prisma's relation selects (as findSessionAccess read it before it became one statement). */
async function accessByRelations(db: Db, userId: string, sessionId: string) {
  const row = await findSession(db, sessionId);
  if (!row) return undefined;
  const { workspace, ...session } = row;
  const membership = await db.membership.findUnique({
    where: { workspaceId_userId: { workspaceId: workspace.id, userId } },
    select: { role: true },
  });
  return { session, workspace, role: membership?.role };
}

itOnBothProviders(
  "findSessionAccess",
  "answers as the relation select did, for members, non-members, deleted and missing sessions",
  async (db) => {
    const owner = await db.user.create({ data: { email: "olga@example.com", name: "Olga" } });
    const outsider = await db.user.create({ data: { email: "otto@example.com", name: "Otto" } });
    const ws = await db.workspace.create({
      data: { name: "W", slug: "w", rootPath: "/srv/w", allowBypass: true, defaultMode: "acceptEdits" },
    });
    await db.membership.create({ data: { workspaceId: ws.id, userId: owner.id, role: "owner" } });
    const full = await db.session.create({
      data: {
        workspaceId: ws.id,
        createdById: owner.id,
        claudeSessionId: "c-1",
        status: "running",
        mode: "plan",
        model: "claude-sonnet",
        title: "A title",
        pid: 4242,
        maxBudgetUsd: 2.5,
        worktreePath: "/srv/w/.worktrees/x",
        createdAt: new Date(Date.UTC(2026, 10, 3, 12, 30, 15, 123)),
      },
    });
    const bare = await db.session.create({ data: { workspaceId: ws.id, createdById: owner.id, status: "idle" } });
    const deleted = await db.session.create({
      data: { workspaceId: ws.id, createdById: owner.id, status: "stopped", deletedAt: new Date() },
    });

    for (const [user, session] of [
      [owner.id, full.id],
      [owner.id, bare.id],
      [outsider.id, full.id],
    ] as const) {
      const answer = await findSessionAccess(db, user, session);
      expect(answer).toBeDefined();
      expect(answer).toStrictEqual(await accessByRelations(db, user, session));
    }
    const mine = await findSessionAccess(db, owner.id, full.id);
    expect(mine?.role).toBe("owner");
    expect(mine?.workspace.allowBypass).toBe(true);
    expect(mine?.session.createdAt.toISOString()).toBe("2026-11-03T12:30:15.123Z");
    expect(mine?.session).toMatchObject({ pid: 4242, maxBudgetUsd: 2.5, createdBy: { id: owner.id, name: "Olga" } });
    expect((await findSessionAccess(db, outsider.id, full.id))?.role).toBeUndefined();
    expect(await findSessionAccess(db, owner.id, deleted.id)).toBeUndefined();
    expect(await findSessionAccess(db, owner.id, "missing")).toBeUndefined();
  },
);

itOnBothProviders(
  "findCommandFailure",
  "finds the failure noted after a logged command, and nothing for another command or seq",
  async (db) => {
    const id = await newSession(db);
    const at = new Date();
    const row = (seq: number, kind: string, payload: string) => ({
      sessionId: id,
      seq,
      kind,
      payload,
      commandId: null,
      userId: null,
      createdAt: at,
    });
    const error = {
      code: "conflict" as const,
      message: "This session's CLI is not running; send a prompt to start it.",
    };
    await insertSessionEvents(db, [
      row(1, "prompt", '{"text":"a","uuid":"u1"}'),
      row(2, "process", commandFailurePayload("interrupt", 1, error)),
      row(3, "prompt", '{"text":"b","uuid":"u2"}'),
      row(4, "process", '{"phase":"spawned","pid":1}'),
      row(12, "prompt", '{"text":"c","uuid":"u3"}'),
      row(13, "process", commandFailurePayload("prompt", 12, error)),
    ]);
    expect(await findCommandFailure(db, id, "prompt", 12)).toEqual(error);
    // the note of commandSeq 12 is not one of commandSeq 1; the prompt at 3 reached its CLI
    expect(await findCommandFailure(db, id, "prompt", 1)).toBeUndefined();
    expect(await findCommandFailure(db, id, "prompt", 3)).toBeUndefined();
    expect(await findCommandFailure(db, id, "interrupt", 1)).toEqual(error);
    expect(await findCommandFailure(db, id, "stop", 1)).toBeUndefined();
    expect(await findCommandFailure(db, id, "prompt", 13)).toBeUndefined();
  },
);

itOnBothProviders(
  "insertTurnChange",
  "stores a step as Prisma reads it back, and lists a session's steps in the order they were stored",
  async (db) => {
    const sessionId = await newSession(db);
    const files = [
      { path: "src/a.ts", status: "modified" as const, insertions: 2, deletions: 1, binary: false, large: false },
    ];
    const stored = [];
    for (let i = 0; i < 5; i++) {
      stored.push(
        await insertTurnChange(db, {
          sessionId,
          kind: i === 4 ? "rewind" : "turn",
          promptSeq: i + 1,
          beforeCommit: i === 0 ? null : `b${i}`,
          afterCommit: `a${i}`,
          status: i === 0 ? "unknown" : "ok",
          files: i === 0 ? [] : files,
        }),
      );
    }
    // five inserts in a row, most within one millisecond: the order survives the tie on createdAt
    expect(await listTurnChanges(db, sessionId)).toEqual(stored);
    const [first, second] = stored;
    expect(second).toMatchObject({
      kind: "turn",
      promptSeq: 2,
      beforeCommit: "b1",
      afterCommit: "a1",
      status: "ok",
      files,
      createdById: null,
    });
    const read = await db.turnChange.findUniqueOrThrow({ where: { id: second!.id } });
    expect(read.createdAt).toEqual(second!.createdAt);
    expect(Math.abs(read.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(JSON.parse(read.files)).toEqual(files);
    expect(first).toMatchObject({ beforeCommit: null, status: "unknown", files: [] });
  },
);
