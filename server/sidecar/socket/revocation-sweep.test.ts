import pino from "pino";
import { Server } from "socket.io";
import { describe, expect, it } from "vitest";
import type { Db } from "@/server/db/client";
import { RevocationSweep, type SweepTimers } from "./revocation-sweep";

/** Timers the test fires by hand. */
function manualTimers() {
  const live = new Map<number, () => void>();
  let next = 0;
  const timers: SweepTimers = {
    setInterval: (fn) => {
      live.set(++next, fn);
      return next;
    },
    clearInterval: (handle) => live.delete(handle as number),
  };
  return { timers, live, tick: () => [...live.values()].forEach((fn) => fn()) };
}

describe("RevocationSweep", () => {
  it("asks the database nothing while no socket is open, and leaves no timer after close()", async () => {
    // Not attached to an HTTP server: nothing to close.
    const io = new Server();
    const asked: string[] = [];
    const db = new Proxy({}, { get: (_t, name) => (asked.push(String(name)), undefined) }) as Db;
    const { timers, live, tick } = manualTimers();
    const sweep = new RevocationSweep({ io, db, log: pino({ level: "silent" }), timers, intervalMs: 1_000 });
    expect(live.size).toBe(1);
    tick();
    expect(await sweep.sweep()).toEqual({ checked: 0, closed: [] });
    expect(asked).toEqual([]);
    await sweep.close();
    expect(live.size).toBe(0);
    expect(await sweep.sweep()).toEqual({ checked: 0, closed: [] });
  });
});

describe("RevocationSweep while sockets subscribe", () => {
  /** One open socket of a member, in `rooms`, with the fields the sweep reads. */
  function memberSocket(rooms: string[]) {
    let disconnected = false;
    const socket = {
      id: "s-1",
      connected: true,
      data: { user: { id: "u-1" }, sessionVersion: 0 },
      rooms: new Set(rooms),
      disconnect: () => {
        disconnected = true;
      },
    };
    return { socket, disconnected: () => disconnected };
  }

  /** A database where u-1 is a member of w-1 and w-1 holds `sessions`; `whileReading` runs during the session read. */
  function database(sessions: string[], whileReading: () => void): Db {
    return {
      user: { findMany: async () => [{ id: "u-1", disabledAt: null, sessionVersion: 0 }] },
      membership: { findMany: async () => [{ userId: "u-1", workspaceId: "w-1", role: "editor" }] },
      session: {
        findMany: async ({ where }: { where: { id: { in: string[] } } }) => {
          whileReading();
          return where.id.in.filter((id) => sessions.includes(id)).map((id) => ({ id, workspaceId: "w-1" }));
        },
      },
    } as unknown as Db;
  }

  it("keeps a member's socket open when it joins a session's room while the pass reads the database", async () => {
    const { socket, disconnected } = memberSocket(["s-1", "session:a"]);
    const io = { of: () => ({ sockets: new Map([[socket.id, socket]]) }) } as unknown as Server;
    // the socket subscribes to session b (its subscribe authorized it) while the pass waits
    const db = database(["a", "b"], () => socket.rooms.add("session:b"));
    const sweep = new RevocationSweep({ io, db, log: pino({ level: "silent" }), timers: null });
    expect(await sweep.sweep()).toEqual({ checked: 1, closed: [] });
    expect(disconnected()).toBe(false);
    // the next pass judges the new room: still a member, still open
    expect(await sweep.sweep()).toEqual({ checked: 1, closed: [] });
    expect(disconnected()).toBe(false);
  });

  it("keeps the sockets of sessions it knew when its memory of sessions starts over", async () => {
    const { socket, disconnected } = memberSocket(["s-1", "session:a", "session:b"]);
    const io = { of: () => ({ sockets: new Map([[socket.id, socket]]) }) } as unknown as Server;
    const sweep = new RevocationSweep({
      io,
      db: database(["a", "b", "c"], () => undefined),
      log: pino({ level: "silent" }),
      timers: null,
      rememberedSessions: 2,
    });
    expect(await sweep.sweep()).toEqual({ checked: 1, closed: [] });
    // a third session: over the limit, the memory starts over; a and b must be read again, not judged unknown
    socket.rooms.add("session:c");
    expect(await sweep.sweep()).toEqual({ checked: 1, closed: [] });
    expect(disconnected()).toBe(false);
  });

  it("closes a socket that listens to a session that is gone", async () => {
    const { socket, disconnected } = memberSocket(["s-1", "session:gone"]);
    const io = { of: () => ({ sockets: new Map([[socket.id, socket]]) }) } as unknown as Server;
    const sweep = new RevocationSweep({
      io,
      db: database(["a"], () => undefined),
      log: pino({ level: "silent" }),
      timers: null,
    });
    expect(await sweep.sweep()).toEqual({
      checked: 1,
      closed: [{ socketId: "s-1", userId: "u-1", reason: "not-a-member" }],
    });
    expect(disconnected()).toBe(true);
  });
});
