/**
 * The history search text of a session: prompts and final answers, appended to the session's
 * search column in order (`searchChain` on the entry).
 *
 * Owns: that column's writes. Must not: throw or hold up a command (best effort: the log stays
 * the truth), or read the log.
 */
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import { appendSessionSearchText } from "@/server/db/sessions";
import type { SessionEntry } from "./session-entry";

export class SessionHistoryIndexer {
  constructor(private readonly deps: { db: Db; log: Logger }) {}

  /** Adds text to the session's history search column (best effort: the log stays the truth). */
  indexText(entry: SessionEntry, text: string): void {
    entry.searchChain = entry.searchChain
      .then(() => appendSessionSearchText(this.deps.db, entry.id, text))
      .catch((err: unknown) => this.deps.log.warn({ err, sessionId: entry.id }, "updating the search text failed"));
  }

  /** Resolves once the entry's queued writes are done. */
  drain(entry: SessionEntry): Promise<void> {
    return entry.searchChain;
  }
}
