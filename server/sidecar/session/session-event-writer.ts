/**
 * The one writer of a sidecar's event log. Every event is written, and only then reported to
 * listeners (DESIGN rule 3: persist, then broadcast).
 *
 * Group commit: appends queue up; a flush takes everything queued (from every session) and
 * writes it in one statement, one flush at a time, so what arrives while a statement is out goes
 * in the next one (on PostgreSQL, several flushes in flight made nearly every line a statement of
 * its own: docs/PERFORMANCE.md §4, "One flush in flight again"). `seq` is assigned by the database inside that
 * statement (the next numbers after the stored log, see `appendSessionEvents`), never from this
 * process's memory, so two sidecars appending to one session (an old owner's last lines racing
 * its successor's) interleave without a gap or a duplicate: the unique (sessionId, seq) index
 * refuses the one that read the same last seq, and its batch is written again. A batch that fails
 * otherwise is retried one event at a time, so one bad row does not take the others down.
 * Listeners are called synchronously in queue order, so each session's events reach them in
 * `seq` order.
 */
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import {
  appendSessionEvents,
  lastSessionSeq,
  SeqConflict,
  type NewSessionEvent,
  type SessionEventRecord,
} from "@/server/db/session-events";

/** The two queries the writer makes; {@link eventLogStoreOf} runs them on the database. */
export interface EventLogStore {
  /**
   * Appends rows, all or none, each session's rows numbered by the store after its stored log, in
   * order; returns them with their seq. Throws {@link SeqConflict} when another writer took a seq first.
   */
  insert(rows: readonly NewSessionEvent[]): Promise<SessionEventRecord[]>;
  /** The highest stored seq of a session, 0 for none. */
  lastSeq(sessionId: string): Promise<number>;
}

/** The event log store on a Prisma client. */
export function eventLogStoreOf(db: Db): EventLogStore {
  return {
    insert: (rows) => appendSessionEvents(db, rows),
    lastSeq: (sessionId) => lastSessionSeq(db, sessionId),
  };
}

/** How often a batch is written again after another writer took its seqs (each try reads the log anew). */
const conflictRetries = 50;

/** An event to append: everything but its `seq`. */
export interface EventDraft {
  sessionId: string;
  kind: string;
  /** JSON text, stored as is. */
  payload: string;
  /** The parsed payload, passed through to listeners so nobody parses it again. */
  value: unknown;
  commandId?: string | null;
  userId?: string | null;
}

/** A stored event as listeners see it. */
export interface StoredEvent {
  record: SessionEventRecord;
  value: unknown;
}

interface Pending {
  draft: EventDraft;
  at: Date;
  resolve: (stored: StoredEvent) => void;
  reject: (err: unknown) => void;
}

/** Options of {@link SessionEventWriter}. */
export interface SessionEventWriterOptions {
  /** Most events in one statement. */
  maxBatch?: number;
  /** Most payload characters in one statement (a few huge tool results go alone). */
  maxBatchChars?: number;
  now?: () => Date;
}

/** Appends to the event log with gap-free, ordered `seq` per session, numbered by the database. */
export class SessionEventWriter {
  private readonly listeners = new Set<(stored: StoredEvent) => void>();
  private queue: Pending[] = [];
  /** A flush is scheduled for the next turn of the event loop. */
  private scheduled = false;
  /** A flush is in flight. */
  private flushing = false;
  /** Resolved when the queue is empty and nothing is in flight (close waits for it). */
  private idle: { promise: Promise<void>; resolve: () => void } | undefined;
  private closed = false;
  private readonly maxBatch: number;
  private readonly maxBatchChars: number;
  private readonly now: () => Date;

  constructor(
    private readonly store: EventLogStore,
    private readonly log: Logger,
    options: SessionEventWriterOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 500;
    this.maxBatchChars = options.maxBatchChars ?? 8 * 1024 * 1024;
    this.now = options.now ?? (() => new Date());
  }

  /** Called with each event right after it is committed, in `seq` order per session. */
  onDidStore(listener: (stored: StoredEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Queues an event; resolves once it is committed (and listeners have seen it). */
  append(draft: EventDraft): Promise<StoredEvent> {
    if (this.closed) return Promise.reject(new Error("the event writer is closed"));
    return new Promise((resolve, reject) => {
      // The time is taken at append, not at flush: it is when the line arrived.
      this.queue.push({ draft, at: this.now(), resolve, reject });
      this.schedule();
    });
  }

  /** The last committed `seq` of a session (0 for an empty log), read from the database. */
  lastSeq(sessionId: string): Promise<number> {
    return this.store.lastSeq(sessionId);
  }

  /**
   * Nothing to forget: no seq counter is kept in memory (the database numbers each append). Kept
   * for callers that drop what they remember of a session another node ran.
   */
  forget(sessionId: string): void {
    void sessionId;
  }

  /** Writes what is queued and refuses new appends. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.queue.length === 0 && !this.flushing) return;
    if (!this.idle) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.idle = { promise, resolve };
    }
    await this.idle.promise;
  }

  /**
   * A flush on the next turn of the loop: setImmediate, not a microtask, so that stdout chunks of
   * other CLIs that arrived in the same poll phase join the batch.
   */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  /** Starts a flush of what is queued, unless one is in flight (its end starts the next). */
  private pump(): void {
    if (this.flushing || this.queue.length === 0) return;
    const batch = this.takeBatch();
    this.flushing = true;
    void this.write(batch).finally(() => {
      this.flushing = false;
      if (this.queue.length > 0) this.pump();
      else if (this.idle) {
        this.idle.resolve();
        this.idle = undefined;
      }
    });
  }

  /** The queued events in queue order, up to the batch limits (at least one). */
  private takeBatch(): Pending[] {
    let chars = 0;
    let count = 0;
    for (const pending of this.queue) {
      if (count > 0 && (count >= this.maxBatch || chars + pending.draft.payload.length > this.maxBatchChars)) break;
      chars += pending.draft.payload.length;
      count += 1;
    }
    return this.queue.splice(0, count);
  }

  private async write(batch: Pending[]): Promise<void> {
    let records: SessionEventRecord[];
    try {
      records = await this.insertRetrying(batch.map((pending) => this.row(pending)));
    } catch (err) {
      this.log.warn({ err, events: batch.length }, "event log batch write failed; writing one by one");
      await this.writeOneByOne(batch);
      return;
    }
    batch.forEach((pending, i) => this.committed(pending, records[i]!));
  }

  /** Inserts, and inserts again while another writer keeps taking the same seqs first. */
  private async insertRetrying(rows: NewSessionEvent[]): Promise<SessionEventRecord[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.store.insert(rows);
      } catch (err) {
        if (!(err instanceof SeqConflict) || attempt >= conflictRetries) throw err;
        // A short random pause, so two writers that clashed do not clash again in step.
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.random() * Math.min(20, 2 * attempt)));
      }
    }
  }

  /** After a failed batch: each event alone, so one bad row does not take the others down. */
  private async writeOneByOne(batch: Pending[]): Promise<void> {
    for (const pending of batch) {
      try {
        const [record] = await this.insertRetrying([this.row(pending)]);
        this.committed(pending, record!);
      } catch (err) {
        this.log.error({ err, sessionId: pending.draft.sessionId, kind: pending.draft.kind }, "event log write failed");
        pending.reject(err);
      }
    }
  }

  private row(pending: Pending): NewSessionEvent {
    const { draft } = pending;
    return {
      sessionId: draft.sessionId,
      kind: draft.kind,
      payload: draft.payload,
      commandId: draft.commandId ?? null,
      userId: draft.userId ?? null,
      createdAt: pending.at,
    };
  }

  private committed(pending: Pending, record: SessionEventRecord): void {
    const stored: StoredEvent = { record, value: pending.draft.value };
    for (const listener of this.listeners) {
      try {
        listener(stored);
      } catch (err) {
        this.log.error({ err }, "event log listener failed");
      }
    }
    pending.resolve(stored);
  }
}
