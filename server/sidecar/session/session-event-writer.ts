/**
 * The one writer of the event log. Every event gets the next `seq` of its session, is written,
 * and only then reported to listeners (DESIGN rule 3: persist, then broadcast).
 *
 * Group commit: appends queue up; one flush at a time takes everything queued (from every
 * session) and writes it in one statement. `seq` is assigned inside the flush, from the last
 * committed value, so a failed write leaves no gap: its events are retried one by one and only
 * what is committed advances the counter. Listeners are called synchronously in queue order, so
 * each session's events reach them in `seq` order.
 */
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import { insertSessionEvents, lastSessionSeq, type SessionEventRecord } from "@/server/db/session-events";

/** The two queries the writer makes; {@link eventLogStoreOf} runs them on the database. */
export interface EventLogStore {
  /** Inserts rows, all or none. */
  insert(rows: readonly SessionEventRecord[]): Promise<void>;
  /** The highest stored seq of a session, 0 for none. */
  lastSeq(sessionId: string): Promise<number>;
}

/** The event log store on a Prisma client. */
export function eventLogStoreOf(db: Db): EventLogStore {
  return { insert: (rows) => insertSessionEvents(db, rows), lastSeq: (sessionId) => lastSessionSeq(db, sessionId) };
}

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

/** Appends to the event log with gap-free, ordered `seq` per session. */
export class SessionEventWriter {
  private readonly lastSeqs = new Map<string, number>();
  private readonly listeners = new Set<(stored: StoredEvent) => void>();
  private queue: Pending[] = [];
  private draining: Promise<void> | undefined;
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
      // setImmediate, not a microtask: stdout chunks of other CLIs that arrived in the same
      // poll phase join this batch.
      this.draining ??= new Promise<void>((done) => setImmediate(() => void this.drain().finally(done)));
    });
  }

  /** The last committed `seq` of a session (0 for an empty log), read from the database once. */
  async lastSeq(sessionId: string): Promise<number> {
    const known = this.lastSeqs.get(sessionId);
    if (known !== undefined) return known;
    const loaded = await this.store.lastSeq(sessionId);
    // A flush may have committed (and set the counter) while we read.
    const current = this.lastSeqs.get(sessionId);
    if (current !== undefined) return current;
    this.lastSeqs.set(sessionId, loaded);
    return loaded;
  }

  /** Forgets a session's counter (it is reloaded from the database on next use). */
  forget(sessionId: string): void {
    if (!this.queue.some((p) => p.draft.sessionId === sessionId)) this.lastSeqs.delete(sessionId);
  }

  /** Writes what is queued and refuses new appends. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.takeBatch();
        await this.write(batch);
      }
    } finally {
      this.draining = undefined;
    }
  }

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
    const sessions = [...new Set(batch.map((p) => p.draft.sessionId))];
    try {
      await Promise.all(sessions.map((id) => this.lastSeq(id)));
    } catch (err) {
      for (const pending of batch) pending.reject(err);
      return;
    }
    const next = new Map(sessions.map((id) => [id, this.lastSeqs.get(id) ?? 0]));
    const records = batch.map((pending) => {
      const seq = (next.get(pending.draft.sessionId) ?? 0) + 1;
      next.set(pending.draft.sessionId, seq);
      return this.record(pending, seq);
    });
    try {
      await this.store.insert(records);
    } catch (err) {
      this.log.warn({ err, events: batch.length }, "event log batch write failed; writing one by one");
      await this.writeOneByOne(batch);
      return;
    }
    for (const [id, seq] of next) this.lastSeqs.set(id, seq);
    batch.forEach((pending, i) => this.committed(pending, records[i]!));
  }

  /** After a failed batch: each event alone, so one bad row does not take the others down. */
  private async writeOneByOne(batch: Pending[]): Promise<void> {
    for (const pending of batch) {
      const id = pending.draft.sessionId;
      let stored = false;
      for (let attempt = 0; attempt < 2 && !stored; attempt++) {
        try {
          // On the retry, the counter is reloaded: another writer may have used the seq.
          if (attempt > 0) this.lastSeqs.delete(id);
          const record = this.record(pending, (await this.lastSeq(id)) + 1);
          await this.store.insert([record]);
          this.lastSeqs.set(id, record.seq);
          this.committed(pending, record);
          stored = true;
        } catch (err) {
          if (attempt === 1) {
            this.log.error({ err, sessionId: id, kind: pending.draft.kind }, "event log write failed");
            pending.reject(err);
          }
        }
      }
    }
  }

  private record(pending: Pending, seq: number): SessionEventRecord {
    const { draft } = pending;
    return {
      sessionId: draft.sessionId,
      seq,
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
