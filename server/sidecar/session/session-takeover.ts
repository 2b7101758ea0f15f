/**
 * A session this sidecar takes over from another node (or from nobody: its lease was free): what
 * the registry remembers of it may be stale, since another node ran turns meanwhile. Before a
 * runner starts, whether its conversation started is read again from the database, so the next
 * child resumes the conversation (`--resume`) whoever ran the last turn.
 *
 * Owns: that re-read. Must not: claim leases (the lifecycle asks the lease keeper) or start runners.
 */
import type { Db } from "@/server/db/client";
import { listResultCandidates } from "@/server/db/session-events";
import { isResult } from "./session-cost-recorder";
import { safeParse, type SessionEntry } from "./session-entry";
import type { SessionEventWriter } from "./session-event-writer";

/**
 * Refreshes an entry taken over: whether the conversation started (it only ever becomes true, so
 * the re-read is safe whatever this node wrote meanwhile) and the writer's seq counter.
 */
export async function refreshTakenOver(db: Db, writer: SessionEventWriter, entry: SessionEntry): Promise<void> {
  writer.forget(entry.id);
  if (entry.conversationStarted) return;
  const results = await listResultCandidates(db, entry.id);
  if (results.some((text) => isResult(safeParse(text)))) entry.conversationStarted = true;
}
