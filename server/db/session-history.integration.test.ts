import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "./client";
import { listSessionHistory } from "./session-history";
import { updateSessionLive } from "./sessions";
import { deployMigrations } from "./migrations";
import { makeTempDir } from "./test-support";

describe("session history on SQLite", () => {
  const tmp = makeTempDir();
  let db: Db;
  let w: { ada: string; bob: string; ws1: string; ws2: string; ws3: string };

  beforeAll(async () => {
    const url = `file:${path.join(tmp.dir, "conduit.db")}`;
    await deployMigrations({ url });
    db = createDb(url);
    const ada = await db.user.create({ data: { email: "ada@example.com", name: "Ada" } });
    const bob = await db.user.create({ data: { email: "bob@example.com", name: "Bob" } });
    const ws1 = await db.workspace.create({ data: { name: "One", slug: "one", rootPath: "/srv/one" } });
    const ws2 = await db.workspace.create({ data: { name: "Two", slug: "two", rootPath: "/srv/two" } });
    const ws3 = await db.workspace.create({ data: { name: "Three", slug: "three", rootPath: "/srv/three" } });
    w = { ada: ada.id, bob: bob.id, ws1: ws1.id, ws2: ws2.id, ws3: ws3.id };
    for (let i = 0; i < 30; i += 1) {
      const s = await db.session.create({
        data: {
          workspaceId: i % 3 === 0 ? ws1.id : i % 3 === 1 ? ws2.id : ws3.id,
          createdById: i % 2 === 0 ? ada.id : bob.id,
          status: i < 5 ? "idle" : "stopped",
          model: i % 5 === 0 ? "claude-sonnet" : null,
          // same timestamp for pairs: the cursor must break ties by id
          createdAt: new Date(Date.UTC(2026, 10, 1 + Math.floor(i / 2))),
        },
      });
      await updateSessionLive(db, s.id, {}, `Prompt number ${i}${i % 4 === 0 ? " about Pineapples" : ""}`);
      await db.costEntry.create({
        data: { resultId: `r${i}`, sessionId: s.id, userId: ada.id, workspaceId: s.workspaceId, model: "m", usd: 0 },
      });
      await db.costEntry.create({
        data: {
          resultId: `r${i}#m`,
          sessionId: s.id,
          userId: ada.id,
          workspaceId: s.workspaceId,
          model: "m",
          usd: 0.5,
        },
      });
    }
  });
  afterAll(async () => {
    await db?.$disconnect();
    tmp.remove();
  });

  it("pages through every session of the scope once, newest first, by cursor", async () => {
    const scope = [w.ws1, w.ws2];
    const seen: string[] = [];
    const times: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages += 1) {
      const page = await listSessionHistory(db, { workspaceIds: scope, cursor, limit: 7 });
      seen.push(...page.rows.map((r) => r.id));
      times.push(...page.rows.map((r) => r.createdAt));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toHaveLength(20);
    expect(new Set(seen).size).toBe(20);
    expect([...times].sort().reverse()).toEqual(times);
    const first = await listSessionHistory(db, { workspaceIds: scope, limit: 1 });
    expect(first.rows[0]).toMatchObject({ costUsd: 0.5, turns: 1 });
  });

  it("searches prompts case-insensitively and filters by user, status, model and date", async () => {
    const all = [w.ws1, w.ws2, w.ws3];
    const pineapples = await listSessionHistory(db, { workspaceIds: all, q: "pineapples", limit: 100 });
    expect(pineapples.rows).toHaveLength(8);
    const both = await listSessionHistory(db, { workspaceIds: all, q: "PINEAPPLES number 12", limit: 100 });
    expect(both.rows).toHaveLength(1);
    const bobs = await listSessionHistory(db, { workspaceIds: all, userId: w.bob, limit: 100 });
    expect(bobs.rows.every((r) => r.createdBy.id === w.bob)).toBe(true);
    expect(bobs.rows).toHaveLength(15);
    expect((await listSessionHistory(db, { workspaceIds: all, status: "live", limit: 100 })).rows).toHaveLength(5);
    expect((await listSessionHistory(db, { workspaceIds: all, model: "claude-sonnet", limit: 100 })).rows).toHaveLength(
      6,
    );
    const early = await listSessionHistory(db, {
      workspaceIds: all,
      from: new Date(Date.UTC(2026, 10, 1)),
      to: new Date(Date.UTC(2026, 10, 3)),
      limit: 100,
    });
    expect(early.rows).toHaveLength(4);
    expect((await listSessionHistory(db, { workspaceIds: [], limit: 100 })).rows).toHaveLength(0);
  });
});
