/**
 * The registry of sessions this sidecar has touched since it started: one `SessionEntry` each,
 * loaded from its row and log on first use (once, however many callers ask at the same time).
 *
 * Owns: the entries map and the loads in flight; rebuilding an entry's figures (last seq, cost,
 * tokens, whether the conversation started) from the database. Must not: start runners, append
 * events, or tell listeners; dropping an entry is the hub's call (`forget`, `close`).
 */
import type { Db } from "@/server/db/client";
import { listRecordedResultIds } from "@/server/db/cost-entries";
import { listResultCandidates } from "@/server/db/session-events";
import { findSession, sumSessionCost } from "@/server/db/sessions";
import { createCostState } from "@/server/domain/cost/cost-reducer";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { countResult, isResult } from "./session-cost-recorder";
import { newEntry, safeParse, type SessionEntry } from "./session-entry";
import type { SessionEventLog } from "./session-event-log";

export class SessionRegistry {
  private readonly entries = new Map<string, SessionEntry>();
  private readonly loading = new Map<string, Promise<SessionEntry>>();

  constructor(private readonly deps: { db: Db; events: SessionEventLog }) {}

  /** The entry of a session this sidecar holds, if it holds it (no load). */
  known(sessionId: string): SessionEntry | undefined {
    return this.entries.get(sessionId);
  }

  /** The entry being loaded, once loaded (undefined when no load runs, or it failed). */
  async loadingEntry(sessionId: string): Promise<SessionEntry | undefined> {
    return this.loading.get(sessionId)?.catch(() => undefined);
  }

  /** Holds a new session's entry. */
  add(entry: SessionEntry): void {
    this.entries.set(entry.id, entry);
  }

  delete(sessionId: string): void {
    this.entries.delete(sessionId);
  }

  /** Every entry held. */
  all(): SessionEntry[] {
    return [...this.entries.values()];
  }

  clear(): void {
    this.entries.clear();
  }

  /** The entry of a session, loaded from the database the first time. */
  entry(sessionId: string): Promise<SessionEntry> {
    const known = this.entries.get(sessionId);
    if (known) return Promise.resolve(known);
    let loading = this.loading.get(sessionId);
    if (!loading) {
      loading = this.load(sessionId).finally(() => this.loading.delete(sessionId));
      this.loading.set(sessionId, loading);
    }
    return loading;
  }

  private async load(sessionId: string): Promise<SessionEntry> {
    const row = await findSession(this.deps.db, sessionId);
    if (!row) throw new AppError(ErrorCode.notFound, "No such session, or you are not a member of its workspace.");
    const [lastSeq, costUsd, results, countedResultIds] = await Promise.all([
      this.deps.events.lastSeq(sessionId),
      sumSessionCost(this.deps.db, sessionId),
      listResultCandidates(this.deps.db, sessionId),
      listRecordedResultIds(this.deps.db, sessionId),
    ]);
    const entry = newEntry(row, row.workspace, { fresh: false, lastSeq, costUsd, conversationStarted: false });
    entry.cost = createCostState({ countedResultIds });
    for (const text of results) {
      const parsed = safeParse(text);
      if (!isResult(parsed)) continue;
      entry.conversationStarted = true;
      countResult(entry, parsed);
    }
    this.deps.events.rememberName(row.createdBy.id, row.createdBy.name);
    this.entries.set(sessionId, entry);
    return entry;
  }
}
