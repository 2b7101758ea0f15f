/**
 * Revocation reaches open sockets. The handshake checks a session once; about every second this
 * sweep reads, for the users with sockets open on this sidecar, their standing (disabled, session
 * version) and their memberships in two flat statements, and closes every socket whose session
 * is no longer valid or that listens to a workspace (or a session of one) its user has left
 * (`judgeOpenSocket`). With a one-second period a revocation takes effect within about 2 s.
 * A role changed under a page that watches it (`workspace:watch-role`, role-watch.ts) is told to
 * that page in the same pass, so it disables (or enables) what the new role allows.
 * Each sidecar sweeps only its own sockets.
 */
import type { Logger } from "pino";
import type { Server, Socket } from "socket.io";
import type { Db } from "@/server/db/client";
import { judgeOpenSocket, type RevocationReason } from "@/server/domain/account/open-socket-verdict";
import type { AccountStanding } from "@/server/domain/account/session-validity";
import type { SocketData } from "./create-socket-server";
import { parseRole, type Role } from "@/server/domain/workspace/roles";
import { tellRoleChanges } from "./role-watch";
import { sessionRoom, workspaceRoom } from "./session-socket";

/** The timer functions the sweep uses (injected by tests). */
export interface SweepTimers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export interface RevocationSweepDeps {
  io: Server;
  db: Db;
  log: Logger;
  /** Period in ms (default 1000). */
  intervalMs?: number;
  /** How many sessions' workspaces are remembered before the memory starts over (default 10,000; tests). */
  rememberedSessions?: number;
  /** Without timers the sweep runs only when `sweep()` is called. */
  timers?: SweepTimers | null;
  /**
   * Told, each pass, the workspaces where each connected user may still decide approvals
   * (owner or editor), so requests routed to them before a role change stop counting for them.
   */
  onDeciders?: (userId: string, decidesIn: ReadonlySet<string>) => void;
  /** The clock (ms) that dates a pass's reads against role watches (tests). */
  now?: () => number;
}

/** What one pass did. */
export interface SweepOutcome {
  checked: number;
  closed: { socketId: string; userId: string; reason: RevocationReason }[];
}

const sessionPrefix = sessionRoom("");
const workspacePrefix = workspaceRoom("");
/** Sessions never move between workspaces: their workspace is remembered (bounded). */
const maxRememberedSessions = 10_000;

const defaultTimers: SweepTimers = {
  setInterval: (fn, ms) => {
    const handle = setInterval(fn, ms);
    handle.unref();
    return handle;
  },
  clearInterval: (handle) => clearInterval(handle as ReturnType<typeof setInterval>),
};

/** Closes open sockets whose access was revoked. */
export class RevocationSweep {
  private readonly timer: unknown;
  private readonly timers: SweepTimers | null;
  private readonly workspaceOfSession = new Map<string, string | null>();
  private running: Promise<SweepOutcome> | undefined;
  private closed = false;

  constructor(private readonly deps: RevocationSweepDeps) {
    this.timers = deps.timers === undefined ? defaultTimers : deps.timers;
    this.timer = this.timers?.setInterval(() => {
      // A slow pass is not stacked on: the next tick finds it running and skips.
      if (this.running) return;
      this.sweep().catch((err: unknown) => deps.log.error({ err }, "revocation sweep failed"));
    }, deps.intervalMs ?? 1_000);
  }

  /** One pass over this sidecar's open sockets. */
  sweep(): Promise<SweepOutcome> {
    if (this.closed) return Promise.resolve({ checked: 0, closed: [] });
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Stops the timer; waits for a pass under way. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timers) this.timers.clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  private async pass(): Promise<SweepOutcome> {
    const sockets = [...this.deps.io.of("/").sockets.values()].filter((s) => dataOf(s).user !== undefined);
    if (sockets.length === 0) return { checked: 0, closed: [] };
    // The rooms are judged as they were before the reads: a socket that subscribes while the pass
    // waits for the database was authorized by its subscribe, and a room it joined after the reads
    // began would be judged against memberships and sessions read without it (a member's socket
    // closed as revoked while it resubscribed after a restart). The next pass sees it.
    const roomsBefore = new Map(sockets.map((s) => [s, [...s.rooms]]));
    const userIds = [...new Set(sockets.map((s) => dataOf(s).user!.id))];
    const { db } = this.deps;
    const readAt = (this.deps.now ?? Date.now)();
    const [accounts, memberships] = await Promise.all([
      db.user.findMany({
        where: { id: { in: userIds } },
        select: { id: true, disabledAt: true, sessionVersion: true },
      }),
      db.membership.findMany({ where: { userId: { in: userIds } }, select: { userId: true, workspaceId: true, role: true } }),
    ]);
    await this.learnSessions(roomsBefore.values());

    const standing = new Map<string, AccountStanding>(accounts.map((a) => [a.id, a]));
    const memberOf = new Map<string, Set<string>>();
    const decidesIn = new Map<string, Set<string>>(userIds.map((id) => [id, new Set<string>()]));
    const rolesOf = new Map<string, Map<string, Role>>();
    for (const m of memberships) {
      let set = memberOf.get(m.userId);
      if (!set) memberOf.set(m.userId, (set = new Set()));
      set.add(m.workspaceId);
      const role = parseRole(m.role);
      if (role) {
        let roles = rolesOf.get(m.userId);
        if (!roles) rolesOf.set(m.userId, (roles = new Map()));
        roles.set(m.workspaceId, role);
      }
      if (m.role === "owner" || m.role === "editor") decidesIn.get(m.userId)?.add(m.workspaceId);
    }
    if (this.deps.onDeciders) for (const [userId, workspaces] of decidesIn) this.deps.onDeciders(userId, workspaces);
    const closed: SweepOutcome["closed"] = [];
    for (const socket of sockets) {
      if (!socket.connected) continue;
      const data = dataOf(socket);
      const userId = data.user!.id;
      // a role changed under an open page: the page is told (role-watch.ts), it disables or enables itself
      tellRoleChanges(socket, rolesOf.get(userId), readAt);
      const reason = judgeOpenSocket({
        account: standing.get(userId),
        claimedVersion: data.sessionVersion ?? 0,
        listensTo: this.workspacesHeard(roomsBefore.get(socket) ?? []),
        memberOf: memberOf.get(userId) ?? new Set(),
      });
      if (reason === undefined) continue;
      closed.push({ socketId: socket.id, userId, reason });
      this.deps.log.info({ userId, socketId: socket.id, reason }, "socket closed: access revoked");
      socket.disconnect(true);
    }
    return { checked: sockets.length, closed };
  }

  /** The workspaces whose facts reach a socket through `rooms` (null: a session that is gone). */
  private workspacesHeard(rooms: readonly string[]): (string | null)[] {
    const heard: (string | null)[] = [];
    for (const room of rooms) {
      if (room.startsWith(workspacePrefix)) heard.push(room.slice(workspacePrefix.length));
      else if (room.startsWith(sessionPrefix))
        heard.push(this.workspaceOfSession.get(room.slice(sessionPrefix.length)) ?? null);
    }
    return heard;
  }

  /** Reads the workspace of every session room not seen before (one statement). */
  private async learnSessions(roomsOfSockets: Iterable<readonly string[]>): Promise<void> {
    const heard = new Set<string>();
    for (const rooms of roomsOfSockets) {
      for (const room of rooms) if (room.startsWith(sessionPrefix)) heard.add(room.slice(sessionPrefix.length));
    }
    let unknown = [...heard].filter((id) => !this.workspaceOfSession.has(id));
    if (unknown.length === 0) return;
    // Full: start over with what is heard now (all of it read again, so no room this pass judges
    // is left without its workspace).
    if (this.workspaceOfSession.size + unknown.length > (this.deps.rememberedSessions ?? maxRememberedSessions)) {
      this.workspaceOfSession.clear();
      unknown = [...heard];
    }
    const rows = await this.deps.db.session.findMany({
      where: { id: { in: unknown } },
      select: { id: true, workspaceId: true },
    });
    for (const row of rows) this.workspaceOfSession.set(row.id, row.workspaceId);
    // A session that is gone is not remembered: its room is judged unknown (null) this time.
  }
}

function dataOf(socket: Socket): Partial<SocketData> {
  return socket.data as Partial<SocketData>;
}
