/**
 * TurnChange rows: a session's file changes per turn (and per take-back) as commit pairs of the
 * workspace's shadow repository (`server/workspace-changes`), with the file list kept as JSON so
 * the history reads it without the repository.
 */
import { Prisma } from "@/generated/prisma/client";
import type { ChangedFile, TurnChangeView } from "@/server/shared/wire/changes";
import type { Db } from "./client";
import { hotExecute } from "./hot-statements";
import { newRowId } from "./row-id";

/** A stored step of a session's changes. */
export interface TurnChangeRow {
  id: string;
  sessionId: string;
  kind: TurnChangeView["kind"];
  promptSeq: number | null;
  beforeCommit: string | null;
  afterCommit: string | null;
  status: TurnChangeView["status"];
  files: ChangedFile[];
  createdById: string | null;
  createdAt: Date;
}

export interface NewTurnChange {
  sessionId: string;
  kind: TurnChangeView["kind"];
  promptSeq: number | null;
  beforeCommit: string | null;
  afterCommit: string | null;
  status: TurnChangeView["status"];
  files: readonly ChangedFile[];
  createdById?: string | null;
}

/**
 * Stores a step. Every turn of every session writes one, so it is one hot INSERT
 * (`hot-statements.ts`) with the id and time made here, as Prisma's `create` would make them, and
 * without its query layer and the read back of the row.
 */
export async function insertTurnChange(db: Db, change: NewTurnChange): Promise<TurnChangeRow> {
  const data = { ...change, files: JSON.stringify(change.files), createdById: change.createdById ?? null };
  const row = { ...data, id: newRowId(), createdAt: new Date() };
  await hotExecute(
    db,
    Prisma.sql`INSERT INTO "TurnChange" ("id", "sessionId", "kind", "promptSeq", "beforeCommit", "afterCommit", "status", "files", "createdById", "createdAt")
      VALUES (${row.id}, ${row.sessionId}, ${row.kind}, ${row.promptSeq}, ${row.beforeCommit}, ${row.afterCommit}, ${row.status}, ${row.files}, ${row.createdById}, ${row.createdAt})`,
  );
  return rowOf(row);
}

/** A session's steps, oldest first. */
export async function listTurnChanges(db: Db, sessionId: string): Promise<TurnChangeRow[]> {
  const rows = await db.turnChange.findMany({ where: { sessionId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return rows.map(rowOf);
}

function rowOf(row: {
  id: string;
  sessionId: string;
  kind: string;
  promptSeq: number | null;
  beforeCommit: string | null;
  afterCommit: string | null;
  status: string;
  files: string;
  createdById: string | null;
  createdAt: Date;
}): TurnChangeRow {
  let files: ChangedFile[] = [];
  try {
    files = JSON.parse(row.files) as ChangedFile[];
  } catch {
    files = [];
  }
  return {
    ...row,
    kind: row.kind === "revert" || row.kind === "rewind" ? row.kind : "turn",
    status: row.status === "ok" ? "ok" : "unknown",
    files,
  };
}
