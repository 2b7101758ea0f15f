// The hub with a lease keeper (fake runners, a real SQLite database): a runner starts only with
// the session's lease, another node's hub is refused while it holds, a lost lease stops the
// runner at once and nothing more of it is logged, a forgotten session gives its lease back, and
// a hub taking over a session another node ran resumes the conversation.
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listSessionEvents } from "@/server/db/session-events";
import { SessionHub } from "@/server/sidecar/session/session-hub";
import { emitTurn, fakeRunnerFactory } from "@/test/fake-session-runner";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { until } from "@/test/until";
import { LeaseKeeper } from "./session-leases";
import { SessionOwnedElsewhere } from "./session-owned-elsewhere";

const log = pino({ level: "silent" });
let fx: SessionFixtures;
let counter = 0;
const commandId = () => `lease-${++counter}`;

beforeAll(async () => {
  fx = await createSessionFixtures();
});
afterAll(async () => {
  await fx.close();
});

function node(id: string) {
  const factory = fakeRunnerFactory({ onPrompt: (runner, input) => emitTurn(runner, input, `answered by ${id}`) });
  const leases = new LeaseKeeper({ db: fx.db, selfId: id, log });
  const hub = new SessionHub({ db: fx.db, createRunner: factory.create, configRoot: path.join(fx.dataDir, "claude-config"), sidecarId: id, leases, log });
  return { hub, leases, factory };
}

const owner = () => ({ id: fx.owner.id, name: fx.owner.name });
const access = () => ({ workspace: fx.workspace, role: "owner" });
const results = async (sessionId: string) => (await listSessionEvents(fx.db, sessionId, 0)).filter((e) => e.kind === "cli" && e.payload.includes('"type":"result"')).length;

describe("the session hub with leases", () => {
  it("claims before a runner starts, refuses another node, fences on a lost lease, releases on forget", async () => {
    const a = node("node-a");
    const b = node("node-b");
    const view = await a.hub.createSession(owner(), access(), { mode: "default", commandId: commandId() });
    expect(await fx.db.sessionLease.findUnique({ where: { sessionId: view.id } })).toMatchObject({ ownerId: "node-a" });
    // B has the session in memory before its conversation started (a viewer there, say)
    expect((await b.hub.view(view.id)).id).toBe(view.id);
    await a.hub.prompt(owner(), view.id, "hello", commandId());
    await until(async () => (await results(view.id)) === 1, 5_000, "A's turn");

    // B cannot start a runner for it while A holds the lease
    const logged = (await listSessionEvents(fx.db, view.id, 0)).length;
    await expect(b.hub.prompt(owner(), view.id, "from b", commandId())).rejects.toBeInstanceOf(SessionOwnedElsewhere);
    expect(b.factory.runners).toHaveLength(0);
    // refused before anything is logged: the forwarder sends the same prompt to the owner
    expect((await listSessionEvents(fx.db, view.id, 0)).length).toBe(logged);

    // A's lease is lost (an adopter deleted it): the renewal fences the runner at once
    const runner = a.factory.runners[0]!;
    await fx.db.sessionLease.delete({ where: { sessionId: view.id } });
    expect(await a.leases.renew()).toEqual([view.id]);
    await until(() => runner.disposed, 5_000, "A's runner stopped");
    const before = (await listSessionEvents(fx.db, view.id, 0)).length;
    runner.emitLine({ type: "system", subtype: "status", status: "requesting", session_id: "x", uuid: crypto.randomUUID() });
    await new Promise((r) => setTimeout(r, 100));
    expect((await listSessionEvents(fx.db, view.id, 0)).length).toBe(before);

    // B takes it over: its entry was loaded before the turn (stale), yet its child resumes
    await b.hub.prompt(owner(), view.id, "now b", commandId());
    expect(b.factory.runners[0]!.options.resume).toBe(true);
    expect(await fx.db.sessionLease.findUnique({ where: { sessionId: view.id } })).toMatchObject({ ownerId: "node-b" });
    await until(async () => (await results(view.id)) === 2, 5_000, "B's turn");

    // a session forgotten (about to be deleted) gives its lease back
    await b.hub.forget(view.id);
    expect(await fx.db.sessionLease.findUnique({ where: { sessionId: view.id } })).toBeNull();
    await a.hub.close();
    await b.hub.close();
  }, 30_000);
});
