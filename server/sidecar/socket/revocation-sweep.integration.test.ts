// Revocation reaching open sockets, with real Socket.IO clients, the real database and the sweep
// on its one-second timer as main.ts runs it. The CLI is the scripted fake runner: what is under
// test is who keeps hearing the session's facts, not the child.
import pino from "pino";
import type { Socket } from "socket.io-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Ack } from "@/server/shared/wire/ack";
import type { ApprovalList } from "@/server/shared/wire/approval";
import { onSessionEvents, type SessionView, type WireEvent } from "@/server/shared/wire/session";
import { emitTurn, fakeRunnerFactory, type FakeSessionRunner } from "@/test/fake-session-runner";
import { createSessionFixtures, type SessionFixtures, type TestUser } from "@/test/session-fixtures";
import { startTestSidecar, type TestSidecar } from "@/test/sidecar-fixture";
import { until } from "@/test/until";

const log = pino({ level: "silent" });
let counter = 0;
const commandId = () => `cmd-${++counter}-${Math.random().toString(36).slice(2, 10)}`;


/**
 * How long a revoked socket may stay open in these tests: the sweep's one-second period plus a
 * margin for a loaded machine. The tests fail without the sweep (a socket stays open forever).
 */
const revocationWaitMs = 8_000;

describe("revocation of open sockets", () => {
  let fx: SessionFixtures;
  let sidecar: TestSidecar;
  const factory = fakeRunnerFactory({ onPrompt: (runner, input) => emitTurn(runner, input, `echo ${input.text}`) });
  let sessionId: string;
  let runner: FakeSessionRunner;

  beforeAll(async () => {
    fx = await createSessionFixtures();
    sidecar = await startTestSidecar(fx, { createRunner: factory.create, approvals: true, revocationSweep: true, log });
    const owner = await sidecar.connect(fx.owner);
    const created = (await owner.emitWithAck("session:create", {
      workspace: fx.workspace.slug,
      mode: "default",
      commandId: commandId(),
    })) as Ack<SessionView>;
    if (!created.ok) throw new Error(created.error.message);
    sessionId = created.data.id;
    runner = factory.runners.at(-1)!;
  });

  afterAll(async () => {
    await sidecar?.close();
    await fx?.close();
  });

  afterEach(async () => {
    // Each test revokes one person; the next starts from the fixture's standing.
    await fx.db.user.updateMany({ data: { disabledAt: null, sessionVersion: 0 } });
    for (const [user, role] of [
      [fx.owner, "owner"],
      [fx.editor, "editor"],
      [fx.viewer, "viewer"],
    ] as const) {
      await fx.db.membership.upsert({
        where: { workspaceId_userId: { workspaceId: fx.workspace.id, userId: user.id } },
        create: { workspaceId: fx.workspace.id, userId: user.id, role },
        update: { role },
      });
    }
  });

  /** A socket of `user` subscribed to the session, collecting its events. */
  async function watcher(
    user: TestUser,
  ): Promise<{ socket: Socket; events: WireEvent[]; disconnected: () => boolean }> {
    const socket = await sidecar.connect(user);
    const events: WireEvent[] = [];
    let gone = false;
    socket.on("disconnect", () => (gone = true));
    onSessionEvents(socket, (e) => events.push(e));
    const ack = (await socket.emitWithAck("session:subscribe", { sessionId, afterSeq: 0 })) as Ack<unknown>;
    expect(ack.ok).toBe(true);
    return { socket, events, disconnected: () => gone };
  }

  async function prompt(text: string): Promise<void> {
    const owner = await sidecar.connect(fx.owner);
    const ack = (await owner.emitWithAck("session:prompt", {
      sessionId,
      text,
      commandId: commandId(),
    })) as Ack<unknown>;
    expect(ack).toMatchObject({ ok: true });
    owner.close();
  }

  it("closes a disabled user's sockets, and the next handshake is refused", async () => {
    const ed = await watcher(fx.editor);
    const edIdle = await sidecar.connect(fx.editor);
    const vera = await watcher(fx.viewer);
    await fx.db.user.update({ where: { id: fx.editor.id }, data: { disabledAt: new Date() } });
    await until(() => ed.disconnected() && !edIdle.connected, revocationWaitMs, "the disabled user's sockets closed");
    await expect(sidecar.connect(fx.editor)).rejects.toThrow("unauthorized");
    // Nobody else was touched.
    expect(vera.socket.connected).toBe(true);
  });

  it("closes the sockets opened before a sign-out (session version bumped)", async () => {
    const ed = await watcher(fx.editor);
    await fx.db.user.update({ where: { id: fx.editor.id }, data: { sessionVersion: { increment: 1 } } });
    await until(() => ed.disconnected(), revocationWaitMs, "the signed-out socket closed");
    await expect(sidecar.connect(fx.editor)).rejects.toThrow("unauthorized");
  });

  it("a removed member stops receiving the session's events; the members who stay keep them", async () => {
    const ed = await watcher(fx.editor);
    const vera = await watcher(fx.viewer);
    await prompt("before");
    await until(() => ed.events.some((e) => e.kind === "prompt"), 5_000, "the editor hears the prompt");

    await fx.db.membership.delete({
      where: { workspaceId_userId: { workspaceId: fx.workspace.id, userId: fx.editor.id } },
    });
    await until(() => ed.disconnected(), revocationWaitMs, "the removed member's socket closed");
    const heard = ed.events.length;
    await prompt("after");
    await until(() => vera.events.filter((e) => e.kind === "prompt").length === 2, 5_000, "the viewer hears it");
    expect(ed.events.length).toBe(heard);
    // Still a user with a valid session: a new socket connects, but the session is not theirs to read.
    const again = await sidecar.connect(fx.editor);
    const refused = (await again.emitWithAck("session:subscribe", { sessionId, afterSeq: 0 })) as Ack<unknown>;
    expect(refused).toMatchObject({ ok: false, error: { code: "not_found" } });
  });

  it("a member lowered to viewer no longer sees a pending request as theirs to answer", async () => {
    const ed = await sidecar.connect(fx.editor);
    const counts: number[] = [];
    ed.on("approval:count", (c: { pending: number }) => counts.push(c.pending));
    const controller = new AbortController();
    const answer = runner.decidePermission!({
      requestId: crypto.randomUUID(),
      request: { subtype: "can_use_tool", tool_name: "Bash", input: { command: "ls" }, tool_use_id: "toolu_1" },
      signal: controller.signal,
    });
    const list = async () => (await ed.emitWithAck("approval:list", {})) as Ack<ApprovalList>;
    await until(
      async () => {
        const l = await list();
        return l.ok && l.data.approvals.some((a) => a.status === "pending");
      },
      5_000,
      "the editor's inbox shows the request",
    );
    await fx.db.membership.update({
      where: { workspaceId_userId: { workspaceId: fx.workspace.id, userId: fx.editor.id } },
      data: { role: "viewer" },
    });
    const after = await list();
    expect(after.ok && after.data.approvals.filter((a) => a.status === "pending")).toEqual([]);
    // The request stops counting for them within a sweep, and the header's badge is told so.
    await until(() => counts.at(-1) === 0, 3_000, "the editor's pending count drops to 0");
    // Still in the workspace, as a viewer: the socket stays open for reading.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(ed.connected).toBe(true);
    controller.abort();
    await answer;
  });
});
