/**
 * Coalesced writes of a session row's live fields (status, mode, model, title, pid, sidecar), and
 * of the history search text queued on the entry (`searchPending`, by the history indexer), in
 * the same statement.
 *
 * Owns: when a row is written (batched, pid changes at once) and the bookkeeping on the entry
 * (`rowDirty`, `rowWriting`, `rowFlush`, `rowWritten`; `searchPending` is emptied by the write
 * that stored it). Must not: change an entry's fields, tell listeners, or throw (a failed write is
 * logged; the next change writes the row again, the queued search text with it).
 */
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import { updateSessionLive } from "@/server/db/sessions";
import type { SessionEntry } from "./session-entry";

/** How long a session row's changed live fields wait for more changes before one write. */
const rowWriteDelayMs = 100;
/** How often a row whose only change is `lastActivityAt` is rewritten. */
const activityWriteMs = 10_000;

export class SessionRowWriter {
  constructor(private readonly deps: { db: Db; log: Logger; sidecarId: string | null }) {}

  /**
   * Writes the row's live fields. The row is the web app's picture of a live session, which the
   * sidecar's status facts keep current in every open page; so changes wait up to
   * {@link rowWriteDelayMs} and are written together (an approval asked and answered within that
   * time costs no write at all), and a row whose only change is `lastActivityAt` is rewritten at
   * most every {@link activityWriteMs}. A new or gone pid is written at once: after a sidecar
   * crash, the reaper finds children by the pids in the rows.
   */
  persistRow(entry: SessionEntry): void {
    entry.rowDirty = true;
    if (entry.rowWriting) {
      if (entry.pid !== entry.rowWritten?.pid) entry.rowFlush?.();
      return;
    }
    entry.rowWriting = (async () => {
      if (entry.rowWritten !== undefined && entry.pid === entry.rowWritten.pid) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, rowWriteDelayMs);
          entry.rowFlush = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      entry.rowFlush = undefined;
      while (entry.rowDirty) {
        entry.rowDirty = false;
        const now = Date.now();
        const fields = {
          status: entry.status,
          mode: entry.mode,
          model: entry.model,
          title: entry.title,
          pid: entry.pid,
          sidecarId: this.deps.sidecarId,
        };
        const key = JSON.stringify(fields);
        const searchTexts = entry.searchPending.length;
        const searchText = searchTexts > 0 ? entry.searchPending.slice(0, searchTexts).join("\n") : undefined;
        const fieldsWritten = !(entry.rowWritten?.key === key && now - entry.rowWritten.at < activityWriteMs);
        if (!fieldsWritten && searchText === undefined) continue;
        try {
          // live fields as written already: the search text alone (lastActivityAt stays)
          await updateSessionLive(
            this.deps.db,
            entry.id,
            fieldsWritten ? { ...fields, lastActivityAt: new Date(now) } : {},
            searchText,
          );
          entry.searchPending.splice(0, searchTexts);
          if (fieldsWritten) entry.rowWritten = { key, pid: fields.pid, at: now };
        } catch (err) {
          this.deps.log.error({ err, sessionId: entry.id }, "updating the session row failed");
        }
      }
    })().finally(() => {
      entry.rowWriting = undefined;
      // A change made after the loop's last check and before this line found a write under way
      // and left it to that write: it starts its own now (with writes as fast as SQLite's, a
      // hub's closing "stopped" fell into that gap and was never written).
      if (entry.rowDirty) this.persistRow(entry);
    });
  }

  /** Ends the wait of a pending write now and resolves once the entry's writes are done. */
  async flush(entry: SessionEntry): Promise<void> {
    while (entry.rowWriting) {
      entry.rowFlush?.();
      await entry.rowWriting;
    }
  }
}
