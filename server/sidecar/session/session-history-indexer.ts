/**
 * The history search text of a session: prompts and final answers, in order. Each text is queued
 * on the entry (`searchPending`) and written with the row's next live-field write (the row writer
 * adds it to the session's search column in the same statement, within its 100 ms batching; its
 * `flush` is the wait for it).
 *
 * Owns: what goes into the search column. Must not: throw or hold up a command (best effort: the
 * log stays the truth), or read the log.
 */
import type { SessionEntry } from "./session-entry";
import type { SessionRowWriter } from "./session-row-writer";

export class SessionHistoryIndexer {
  constructor(private readonly deps: { rows: SessionRowWriter }) {}

  /** Adds text to the session's history search column (best effort: the log stays the truth). */
  indexText(entry: SessionEntry, text: string): void {
    if (text === "") return;
    entry.searchPending.push(text);
    this.deps.rows.persistRow(entry);
  }
}
