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
