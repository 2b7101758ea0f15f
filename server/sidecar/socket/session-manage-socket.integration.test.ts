// The session-management socket commands' walls: who may rename, archive, stop a task and delete,
// each answered per message from the member's current role; a non-member learns nothing; a
// payload that fails its schema changes nothing; the rooms hear of an archive or delete.
import pino from "pino";
import type { Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ack } from "@/server/shared/wire/ack";
import { fakeRunnerFactory } from "@/test/fake-session-runner";
import { createSessionFixtures, type SessionFixtures, type TestUser } from "@/test/session-fixtures";
import { startTestSidecar, type TestSidecar } from "@/test/sidecar-fixture";

const log = pino({ level: "silent" });
let counter = 0;
const commandId = () => `mng-${++counter}-${Math.random().toString(36).slice(2, 10)}`;

describe("session management sockets", () => {
  let fx: SessionFixtures;
  let sidecar: TestSidecar;
  const sockets = new Map<string, Socket>();

  beforeAll(async () => {
    fx = await createSessionFixtures();
    sidecar = await startTestSidecar(fx, { createRunner: fakeRunnerFactory().create, log });
    for (const who of ["owner", "editor", "viewer", "outsider"] as const)
      sockets.set(who, await sidecar.connect(fx[who]));
  });

  afterAll(async () => {
    await sidecar?.close();
    await fx?.close();
  });

  const ask = <T>(who: string, event: string, payload: unknown) =>
    sockets.get(who)!.timeout(10_000).emitWithAck(event, payload) as Promise<Ack<T>>;

  async function newSession(by: TestUser = fx.owner): Promise<string> {
    const view = await sidecar.hub.createSession(
      by,
      { workspace: fx.workspace, role: "owner" },
      { mode: "default", commandId: commandId() },
    );
    return view.id;
  }

  it("rename and archive: editors and owners; viewers forbidden; outsiders not_found", async () => {
    const sessionId = await newSession();
    const codes: Record<string, string> = {};
    for (const who of ["outsider", "viewer", "editor", "owner"]) {
      const ack = await ask(who, "session:rename", { sessionId, title: `by ${who}`, commandId: commandId() });
      codes[who] = ack.ok ? "ok" : ack.error.code;
    }
    expect(codes).toEqual({ outsider: "not_found", viewer: "forbidden", editor: "ok", owner: "ok" });
    expect((await fx.db.session.findUniqueOrThrow({ where: { id: sessionId } })).title).toBe("by owner");

    const removed: unknown[] = [];
    sockets.get("owner")!.on("session:removed", (p: unknown) => removed.push(p));
    await ask("owner", "workspace:watch", { workspace: fx.workspace.slug });
    const viewer = await ask("viewer", "session:archive", { sessionId, archived: true, commandId: commandId() });
    expect(viewer).toMatchObject({ ok: false, error: { code: "forbidden" } });
    expect(await ask("editor", "session:archive", { sessionId, archived: true, commandId: commandId() })).toEqual({
      ok: true,
      data: { archived: true },
    });
    await expect.poll(() => removed).toEqual([{ sessionId, workspaceId: fx.workspace.id, archived: true }]);
  });

  it("refuses an empty or oversized title, and a delete not confirmed by the session's id", async () => {
    const sessionId = await newSession();
    expect(await ask("owner", "session:rename", { sessionId, title: "   ", commandId: commandId() })).toMatchObject({
      ok: false,
      error: { code: "invalid_payload" },
    });
    expect(
      await ask("owner", "session:rename", { sessionId, title: "x".repeat(201), commandId: commandId() }),
    ).toMatchObject({ ok: false, error: { code: "invalid_payload" } });
    expect(
      await ask("owner", "session:delete", { sessionId, confirm: "another-session", commandId: commandId() }),
    ).toMatchObject({ ok: false, error: { code: "invalid_payload" } });
    expect(await fx.db.session.findUniqueOrThrow({ where: { id: sessionId } })).toMatchObject({
      title: null,
      deletedAt: null,
    });
  });

  it("delete: owners only; afterwards the session is not_found for everyone, its cost rows kept", async () => {
    const sessionId = await newSession(fx.editor);
    await fx.db.costEntry.create({
      data: {
        resultId: `r-${sessionId}`,
        sessionId,
        userId: fx.editor.id,
        workspaceId: fx.workspace.id,
        model: "m",
        usd: 0.5,
      },
    });
    const codes: Record<string, string> = {};
    for (const who of ["outsider", "viewer", "editor"]) {
      const ack = await ask(who, "session:delete", { sessionId, confirm: sessionId, commandId: commandId() });
      codes[who] = ack.ok ? "ok" : ack.error.code;
    }
    // the editor started this session and still may not delete it
    expect(codes).toEqual({ outsider: "not_found", viewer: "forbidden", editor: "forbidden" });
    expect(await ask("owner", "session:delete", { sessionId, confirm: sessionId, commandId: commandId() })).toEqual({
      ok: true,
      data: { sessionId, workspaceId: fx.workspace.id },
    });
    expect(await ask("owner", "session:subscribe", { sessionId, afterSeq: 0 })).toMatchObject({
      ok: false,
      error: { code: "not_found" },
    });
    expect(await ask("editor", "session:rename", { sessionId, title: "again", commandId: commandId() })).toMatchObject({
      ok: false,
      error: { code: "not_found" },
    });
    expect(await fx.db.costEntry.count({ where: { sessionId } })).toBe(1);
    expect(await fx.db.sessionEvent.count({ where: { sessionId } })).toBe(0);
    const audit = await fx.db.auditLog.findFirstOrThrow({ where: { objectId: sessionId, action: "session.delete" } });
    expect(audit.actorId).toBe(fx.owner.id);
  });

  it("stop-task: steerers only, and a clear conflict when no CLI is live", async () => {
    const sessionId = await newSession();
    await sidecar.hub.stop(fx.owner, sessionId, commandId());
    const codes: Record<string, string> = {};
    for (const who of ["outsider", "viewer", "editor"]) {
      const ack = await ask(who, "session:stop-task", { sessionId, taskId: "t1", commandId: commandId() });
      codes[who] = ack.ok ? "ok" : ack.error.code;
    }
    expect(codes).toEqual({ outsider: "not_found", viewer: "forbidden", editor: "conflict" });
  });
});
