import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import {
  findSessionAccess,
  findWorkspaceAccess,
  insertSession,
  listRecordedPids,
  markOrphanedSessionsStopped,
  updateSessionLive,
} from "./sessions";

let fx: SessionFixtures;
beforeAll(async () => {
  fx = await createSessionFixtures();
});
afterAll(async () => {
  await fx.close();
});

const newSession = () =>
  insertSession(fx.db, {
    workspaceId: fx.workspace.id,
    createdById: fx.owner.id,
    claudeSessionId: crypto.randomUUID(),
    mode: "default",
    model: null,
    sidecarId: "host-a",
  });

describe("session store", () => {
  it("finds a workspace with the caller's role, and nothing for a non-member or an unknown slug", async () => {
    expect(await findWorkspaceAccess(fx.db, fx.viewer.id, "demo")).toMatchObject({
      role: "viewer",
      workspace: { id: fx.workspace.id, allowBypass: false },
    });
    expect(await findWorkspaceAccess(fx.db, fx.outsider.id, "demo")).toBeUndefined();
    expect(await findWorkspaceAccess(fx.db, fx.owner.id, "nope")).toBeUndefined();
  });

  it("finds a session with its workspace and the caller's role (undefined for a non-member)", async () => {
    const session = await newSession();
    expect(session).toMatchObject({ status: "starting", createdBy: { id: fx.owner.id, name: fx.owner.name } });
    expect(await findSessionAccess(fx.db, fx.editor.id, session.id)).toMatchObject({
      role: "editor",
      session: { id: session.id },
      workspace: { slug: "demo" },
    });
    expect(await findSessionAccess(fx.db, fx.outsider.id, session.id)).toMatchObject({ role: undefined });
    expect(await findSessionAccess(fx.db, fx.owner.id, "missing")).toBeUndefined();
  });

  it("hands a starting sidecar the pids it recorded and marks its live rows stopped", async () => {
    const mine = await newSession();
    const ended = await newSession();
    const other = await newSession();
    await updateSessionLive(fx.db, mine.id, { status: "running", pid: 4242 });
    await updateSessionLive(fx.db, ended.id, { status: "dead" });
    await updateSessionLive(fx.db, other.id, { status: "idle", pid: 4343, sidecarId: "host-b" });
    expect(await listRecordedPids(fx.db, "host-a")).toEqual([4242]);
    expect(await markOrphanedSessionsStopped(fx.db, "host-a")).toBeGreaterThanOrEqual(1);
    const rows = await fx.db.session.findMany({ where: { id: { in: [mine.id, ended.id, other.id] } } });
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(mine.id)).toMatchObject({ status: "stopped", pid: null });
    expect(byId.get(ended.id)).toMatchObject({ status: "dead" });
    expect(byId.get(other.id)).toMatchObject({ status: "idle", pid: 4343 });
  });
});
