import pino from "pino";
import type { Server, Socket } from "socket.io";
import { describe, expect, it } from "vitest";
import type { Db } from "@/server/db/client";
import type { Role } from "@/server/domain/workspace/roles";
import { RevocationSweep } from "./revocation-sweep";
import { attachRoleWatch, tellRoleChanges } from "./role-watch";

/** One member's socket, the facts it was sent, and a way to send it a command. */
function fakeSocket(userId = "u-1") {
  const handlers = new Map<string, (...args: unknown[]) => void>();
  const emitted: [string, unknown][] = [];
  const socket = {
    id: `s-${userId}`,
    connected: true,
    data: { user: { id: userId, name: userId }, sessionVersion: 0 },
    rooms: new Set<string>([`s-${userId}`]),
    use: () => undefined,
    listeners: () => [],
    on: (name: string, fn: (...args: unknown[]) => void) => handlers.set(name, fn),
    emit: (name: string, payload: unknown) => emitted.push([name, payload]),
    disconnect: () => undefined,
  };
  const call = (name: string, payload: unknown) =>
    new Promise<unknown>((resolve) => handlers.get(name)!(payload, resolve));
  return { socket: socket as unknown as Socket, emitted, call };
}

function fakeIo(sockets: Socket[]) {
  let onConnection: ((s: Socket) => void) | undefined;
  const io = {
    on: (_: string, fn: (s: Socket) => void) => (onConnection = fn),
    off: () => undefined,
    of: () => ({ sockets: new Map(sockets.map((s) => [s.id, s])) }),
  } as unknown as Server;
  return { io, connect: (s: Socket) => onConnection!(s) };
}

/** A database whose memberships the test changes. */
function database(memberships: { userId: string; workspaceId: string; role: Role }[]) {
  return {
    user: { findMany: async () => [{ id: "u-1", disabledAt: null, sessionVersion: 0 }] },
    membership: {
      findMany: async () => memberships,
      findUnique: async ({ where }: { where: { workspaceId_userId: { workspaceId: string; userId: string } } }) =>
        memberships.find((m) => m.workspaceId === where.workspaceId_userId.workspaceId && m.userId === where.workspaceId_userId.userId) ?? null,
    },
    session: { findMany: async () => [] },
  } as unknown as Db;
}

const log = pino({ level: "silent" });

describe("role watch", () => {
  it("answers the role now, and the sweep tells the page once when it changes, and again when it changes back", async () => {
    const memberships: { userId: string; workspaceId: string; role: Role }[] = [{ userId: "u-1", workspaceId: "w-1", role: "editor" }];
    const db = database(memberships);
    const { socket, emitted, call } = fakeSocket();
    const { io, connect } = fakeIo([socket]);
    let clock = 1_000;
    attachRoleWatch(io, { db, log, now: () => clock });
    connect(socket);
    expect(await call("workspace:watch-role", { workspaceId: "w-1", role: "editor" })).toEqual({ ok: true, data: { role: "editor" } });

    clock = 2_000;
    const sweep = new RevocationSweep({ io, db, log, timers: null, now: () => clock });
    await sweep.sweep();
    expect(emitted).toEqual([]);

    memberships[0]!.role = "viewer";
    clock = 3_000;
    await sweep.sweep();
    expect(emitted).toEqual([["workspace:role", { workspaceId: "w-1", role: "viewer", previous: "editor" }]]);
    clock = 4_000;
    await sweep.sweep();
    expect(emitted).toHaveLength(1);

    memberships[0]!.role = "editor";
    clock = 5_000;
    await sweep.sweep();
    expect(emitted.at(-1)).toEqual(["workspace:role", { workspaceId: "w-1", role: "editor", previous: "viewer" }]);
  });

  it("answers a page drawn before a change with the role now, and then stays quiet", async () => {
    const db = database([{ userId: "u-1", workspaceId: "w-1", role: "viewer" }]);
    const { socket, emitted, call } = fakeSocket();
    const { io, connect } = fakeIo([socket]);
    attachRoleWatch(io, { db, log, now: () => 10 });
    connect(socket);
    expect(await call("workspace:watch-role", { workspaceId: "w-1", role: "editor" })).toEqual({ ok: true, data: { role: "viewer" } });
    await new RevocationSweep({ io, db, log, timers: null, now: () => 20 }).sweep();
    expect(emitted).toEqual([]);
  });

  it("tells nothing of other people's workspaces, of one the user left, or from a pass that read before the watch", async () => {
    const db = database([{ userId: "u-2", workspaceId: "w-9", role: "owner" }]);
    const { socket, emitted, call } = fakeSocket();
    const { io, connect } = fakeIo([socket]);
    attachRoleWatch(io, { db, log, now: () => 100 });
    connect(socket);
    expect(await call("workspace:watch-role", { workspaceId: "w-9", role: "viewer" })).toEqual({ ok: true, data: { role: null } });
    expect(tellRoleChanges(socket, new Map(), 200)).toBe(0);
    // a pass whose reads began before the watch was set does not judge it
    expect(tellRoleChanges(socket, new Map([["w-9", "owner"]]), 50)).toBe(0);
    expect(emitted).toEqual([]);
  });

  it("refuses a malformed watch", async () => {
    const { socket, call } = fakeSocket();
    const { io, connect } = fakeIo([socket]);
    attachRoleWatch(io, { db: database([]), log });
    connect(socket);
    expect(await call("workspace:watch-role", { workspaceId: "w-1", role: "admin" })).toMatchObject({ ok: false, error: { code: "invalid_payload" } });
  });
});
