/**
 * The hub's way into a session's event log: every event of a session is appended here, through
 * the event writer (persist first), and the names of the people named on events are known here.
 *
 * Owns: the writer (and closing it when the hub made it), `entry.tail` (the last append, which
 * status facts wait for), the user-name cache. Must not: tell listeners (the writer's
 * `onDidStore` does, through session-subscriptions), or change an entry's figures.
 */
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import { commandFailurePayload, type SessionEventRecord } from "@/server/db/session-events";
import { findUserNames } from "@/server/db/sessions";
import { toWireError } from "@/server/shared/errors/app-error";
import type { WireEventKind } from "@/server/shared/wire/session";
import type { SessionEntry } from "./session-entry";
import { eventLogStoreOf, SessionEventWriter, type StoredEvent } from "./session-event-writer";
import type { Actor } from "./session-hub-types";

export class SessionEventLog {
  readonly writer: SessionEventWriter;
  private readonly ownsWriter: boolean;
  private readonly names = new Map<string, string>();

  constructor(private readonly deps: { db: Db; log: Logger; writer?: SessionEventWriter | undefined }) {
    this.ownsWriter = deps.writer === undefined;
    this.writer = deps.writer ?? new SessionEventWriter(eventLogStoreOf(deps.db), deps.log);
  }

  append(
    entry: SessionEntry,
    kind: WireEventKind,
    value: unknown,
    command?: { commandId: string; actor: Actor },
  ): Promise<StoredEvent> {
    return this.appendRaw(entry, kind, JSON.stringify(value), value, command);
  }

  appendRaw(
    entry: SessionEntry,
    kind: WireEventKind,
    payload: string,
    value: unknown,
    /** A command's id and who sent it; or only who (a decision's approver), for an event that is no command. */
    command?: { commandId?: string; actor: Actor },
  ): Promise<StoredEvent> {
    if (command) this.names.set(command.actor.id, command.actor.name);
    const stored = this.writer.append({
      sessionId: entry.id,
      kind,
      payload,
      value,
      commandId: command?.commandId ?? null,
      userId: command?.actor.id ?? null,
    });
    entry.tail = stored.catch(() => undefined);
    // a command's failure reaches its caller; any other event's is logged here
    if (command?.commandId === undefined) {
      stored.catch((err: unknown) =>
        this.deps.log.error({ err, sessionId: entry.id, kind }, "an event was not stored and is lost"),
      );
    }
    return stored;
  }

  appendQuietly(entry: SessionEntry, kind: WireEventKind, value: unknown): void {
    void this.appendRaw(entry, kind, JSON.stringify(value), value);
  }

  /** Records that a command's effect failed after the command itself was logged. */
  async noteFailure(entry: SessionEntry, command: string, seq: number, err: unknown): Promise<void> {
    this.deps.log.warn({ err, sessionId: entry.id, command }, "session command failed");
    const error = toWireError(err);
    await this.appendRaw(entry, "process", commandFailurePayload(command, seq, error), {
      phase: "command-failed",
      command,
      commandSeq: seq,
      error,
    }).catch(() => undefined);
  }

  /** The highest `seq` in a session's log. */
  lastSeq(sessionId: string): Promise<number> {
    return this.writer.lastSeq(sessionId);
  }

  /** Closes the writer if this log made it (a writer passed in is its owner's to close). */
  async close(): Promise<void> {
    if (this.ownsWriter) await this.writer.close();
  }

  rememberName(userId: string, name: string): void {
    this.names.set(userId, name);
  }

  async learnNames(rows: readonly SessionEventRecord[]): Promise<void> {
    const missing = [
      ...new Set(rows.map((r) => r.userId).filter((id): id is string => id !== null && !this.names.has(id))),
    ];
    if (missing.length === 0) return;
    for (const [id, name] of await findUserNames(this.deps.db, missing)) this.names.set(id, name);
  }

  nameOf(userId: string | null): string | undefined {
    return userId === null ? undefined : this.names.get(userId);
  }
}
