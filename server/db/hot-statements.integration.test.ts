// The hot statements on both providers: the same rows and types as Prisma's raw path, timestamps
// read as UTC whatever the process's zone, named statements reused call after call.
import { expect, vi } from "vitest";
import { Prisma } from "@/generated/prisma/client";
import type { Db } from "./client";
import { recordTurnCost } from "./cost-entries";
import { hotExecute, hotRows } from "./hot-statements";
import { findSessionCommand, insertSessionEvents } from "./session-events";
import { claimSessionLease, findSessionLease } from "./session-leases";
import { findSessionAccess, sumSessionCost, updateSessionLive } from "./sessions";
import { itOnBothProviders } from "./test-support";

async function newSession(db: Db) {
  const user = await db.user.create({ data: { email: `u${Math.random()}@example.com`, name: "U" } });
  const ws = await db.workspace.create({
    data: { name: "W", slug: `w${Date.now()}${Math.random()}`.replace(".", ""), rootPath: "/srv/w" },
  });
  await db.membership.create({ data: { userId: user.id, workspaceId: ws.id, role: "editor" } });
  const createdAt = new Date("2026-03-29T01:30:00.123Z"); // a DST change in Europe, odd hours elsewhere
  const session = await db.session.create({
    data: { workspaceId: ws.id, createdById: user.id, status: "idle", createdAt, maxBudgetUsd: 2.5 },
  });
  return { userId: user.id, workspaceId: ws.id, sessionId: session.id, createdAt };
}

itOnBothProviders(
  "hot statements",
  "read timestamps as UTC in any process zone, and numbers as numbers",
  async (db) => {
    const { userId, sessionId, createdAt } = await newSession(db);
    const zone = process.env.TZ;
    try {
      for (const tz of ["America/New_York", "Asia/Kolkata", "UTC"]) {
        process.env.TZ = tz;
        const access = await findSessionAccess(db, userId, sessionId);
        expect(access?.session.createdAt.toISOString()).toBe(createdAt.toISOString());
        expect(access?.session.maxBudgetUsd).toBe(2.5);
        expect(access?.role).toBe("editor");
        // a write stamped now reads back as the same instant
        const at = new Date(Math.floor(Date.now() / 1000) * 1000);
        await updateSessionLive(db, sessionId, { status: "running", pid: 4242, lastActivityAt: at });
        const [row] = await hotRows<{ lastActivityAt: Date | string | number; pid: number; n: number }>(
          db,
          Prisma.sql`SELECT "lastActivityAt", "pid", (SELECT COUNT(*) FROM "Session" WHERE "id" = ${sessionId}) AS "n" FROM "Session" WHERE "id" = ${sessionId}`,
        );
        expect(new Date(row!.lastActivityAt).getTime()).toBe(at.getTime());
        expect(Number(row!.pid)).toBe(4242);
        expect(Number(row!.n)).toBe(1);
        const stored = await db.session.findUniqueOrThrow({
          where: { id: sessionId },
          select: { lastActivityAt: true, status: true },
        });
        expect(stored.lastActivityAt?.getTime()).toBe(at.getTime());
        expect(stored.status).toBe("running");
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  },
);

itOnBothProviders(
  "hot statements",
  "run one text many times and several texts side by side, with nulls",
  async (db) => {
    const { sessionId, workspaceId, userId } = await newSession(db);
    expect(await sumSessionCost(db, sessionId)).toBe(0);
    await db.costEntry.createMany({
      data: [0.25, 0.5].map((usd, i) => ({
        resultId: `r${i}`,
        sessionId,
        userId,
        workspaceId,
        model: "m",
        usd,
        at: new Date(),
      })),
    });
    const runs = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? sumSessionCost(db, sessionId)
          : hotRows<{ title: string | null }>(
              db,
              Prisma.sql`SELECT "title" FROM "Session" WHERE "id" = ${sessionId}`,
            ).then((r) => r[0]?.title),
      ),
    );
    expect(runs.filter((_, i) => i % 2 === 0)).toEqual(Array(20).fill(0.75));
    expect(runs.filter((_, i) => i % 2 === 1)).toEqual(Array(20).fill(null));
    expect(
      await hotExecute(
        db,
        Prisma.sql`UPDATE "Session" SET "title" = ${null}, "pid" = ${null} WHERE "id" = ${sessionId}`,
      ),
    ).toBe(1);
    expect(
      await hotExecute(db, Prisma.sql`UPDATE "Session" SET "title" = ${"x"} WHERE "id" = ${"no-such-session"}`),
    ).toBe(0);
  },
);

itOnBothProviders("hot statements", "read a lease and a command's event as the model API does", async (db) => {
  const { sessionId } = await newSession(db);
  expect(await findSessionLease(db, sessionId)).toBeNull();
  const expiresAt = new Date(Date.now() + 8_000);
  await claimSessionLease(db, { sessionId, ownerId: "sc-1", now: new Date(), expiresAt });
  expect(await findSessionLease(db, sessionId)).toEqual({ sessionId, ownerId: "sc-1", generation: 1, expiresAt });
  expect(await findSessionLease(db, sessionId)).toEqual(
    await db.sessionLease.findUnique({
      where: { sessionId },
      select: { sessionId: true, ownerId: true, generation: true, expiresAt: true },
    }),
  );
  const event = {
    sessionId,
    seq: 1,
    kind: "prompt",
    payload: '{"text":"hi"}',
    commandId: "cmd-hot-1",
    userId: null,
    createdAt: new Date("2026-01-02T03:04:05.678Z"),
  };
  await insertSessionEvents(db, [event]);
  expect(await findSessionCommand(db, sessionId, "cmd-hot-1")).toEqual(event);
  expect(await findSessionCommand(db, sessionId, "cmd-hot-2")).toBeUndefined();
});

itOnBothProviders(
  "hot statements",
  "write Dates and booleans as the model API stores them, and skip Prisma's query layer",
  async (db) => {
    const { sessionId, workspaceId, userId } = await newSession(db);
    const rawQueries = vi.spyOn(db, "$queryRaw");
    const rawExecutes = vi.spyOn(db, "$executeRaw");
    const at = new Date("2026-07-08T09:10:11.012Z");
    const entry = {
      resultId: "r-hot",
      sessionId,
      userId,
      workspaceId,
      model: "m",
      inputTokens: 1,
      outputTokens: 2,
      cacheReadTokens: 3,
      cacheWriteTokens: 4,
      usd: 0.125,
      numTurns: 1,
      durationMs: 5,
      durationApiMs: 6,
      isError: true,
      permissionDenials: 0,
      at,
    };
    expect(await recordTurnCost(db, sessionId, [entry, { ...entry, usd: 9 }])).toEqual({
      inserted: 1,
      sessionUsd: 0.125,
    });
    expect(await recordTurnCost(db, sessionId, [entry])).toEqual({ inserted: 0, sessionUsd: 0.125 });
    await updateSessionLive(db, sessionId, { status: "running", lastActivityAt: at });
    const [read] = await hotRows<{ at: Date; isError: boolean; usd: number }>(
      db,
      Prisma.sql`SELECT "at", "isError", "usd" FROM "CostEntry" WHERE "resultId" = ${"r-hot"}`,
    );
    expect(read).toEqual({ at, isError: true, usd: 0.125 });
    // ranges the model API writes compare with what the hot statements wrote
    expect(
      await db.costEntry.count({ where: { at: { gte: at, lt: new Date(at.getTime() + 1) }, isError: true } }),
    ).toBe(1);
    expect(await db.session.count({ where: { id: sessionId, lastActivityAt: { gte: at } } })).toBe(1);
    // neither provider sends these through Prisma's raw path (a named statement on PostgreSQL's
    // pool, Prisma's own connection on SQLite)
    expect(rawQueries).not.toHaveBeenCalled();
    expect(rawExecutes).not.toHaveBeenCalled();
  },
);
