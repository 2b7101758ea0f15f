/**
 * Prompts the log holds that no CLI answered: the reads behind the sidecar's start-up sweep
 * (server/sidecar/session/undelivered-prompts.ts). A prompt is *settled* once something after it
 * in its session's log ends the matter visibly: a `result` line, the child's `exited` note, a
 * failed command, or an earlier sweep's notice. What is left unsettled when a sidecar starts was
 * cut off by the previous sidecar's death: nothing of this process will ever answer it.
 */
import { Prisma } from "@/generated/prisma/client";
import type { Db } from "./client";

/** Process-event phases that settle the prompts before them. */
export const settlingPhases = ["exited", "command-failed", "prompt-refused", "turn-interrupted"] as const;

/** A prompt no CLI answered. `delivered`: a CLI line after it names its uuid (the CLI had it). */
export interface UnansweredPrompt {
  sessionId: string;
  seq: number;
  uuid: string | undefined;
  delivered: boolean;
}

const settles = (alias: string) =>
  Prisma.raw(
    `((${alias}."kind" = 'cli' AND ${alias}."payload" LIKE '%"type":"result"%') OR (${alias}."kind" = 'process' AND (` +
      settlingPhases.map((phase) => `${alias}."payload" LIKE '%"phase":"${phase}"%'`).join(" OR ") +
      ")))",
  );

/**
 * Sessions (of `sidecarId`, or of none) whose last prompt is unsettled, with that prompt's seq.
 * One statement: a session's last prompt through the (sessionId, kind) index, then only the
 * events after it.
 */
async function sessionsWithUnsettledPrompt(db: Db, sidecarId: string): Promise<{ sessionId: string; seq: number }[]> {
  const rows = await db.$queryRaw<{ sessionId: string; seq: number | bigint }[]>`
    SELECT s."id" AS "sessionId", p."seq" AS "seq"
    FROM "Session" s
    JOIN "SessionEvent" p ON p."sessionId" = s."id" AND p."kind" = 'prompt'
      AND p."seq" = (SELECT MAX(q."seq") FROM "SessionEvent" q WHERE q."sessionId" = s."id" AND q."kind" = 'prompt')
    WHERE s."deletedAt" IS NULL
      AND (s."sidecarId" = ${sidecarId} OR s."sidecarId" IS NULL)
      AND NOT EXISTS (SELECT 1 FROM "SessionEvent" e WHERE e."sessionId" = s."id" AND e."seq" > p."seq" AND ${settles("e")})`;
  return rows.map((r) => ({ sessionId: r.sessionId, seq: Number(r.seq) }));
}

/** The seq of the last settling event before `beforeSeq` (0 when none). */
async function lastSettledSeq(db: Db, sessionId: string, beforeSeq: number): Promise<number> {
  const rows = await db.$queryRaw<{ seq: number | bigint | null }[]>`
    SELECT MAX(e."seq") AS "seq" FROM "SessionEvent" e
    WHERE e."sessionId" = ${sessionId} AND e."seq" < ${beforeSeq} AND ${settles("e")}`;
  return Number(rows[0]?.seq ?? 0);
}

function uuidOf(payload: string): string | undefined {
  try {
    const value = JSON.parse(payload) as { uuid?: unknown };
    return typeof value.uuid === "string" ? value.uuid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every unsettled prompt of the sessions of `sidecarId` (or of none), oldest first per session.
 * Only meaningful while no CLI of this sidecar runs: call it at start, before sessions load.
 */
export async function listUnansweredPrompts(db: Db, sidecarId: string): Promise<UnansweredPrompt[]> {
  const found: UnansweredPrompt[] = [];
  for (const last of await sessionsWithUnsettledPrompt(db, sidecarId)) {
    const from = await lastSettledSeq(db, last.sessionId, last.seq);
    const prompts = await db.sessionEvent.findMany({
      where: { sessionId: last.sessionId, kind: "prompt", seq: { gt: from, lte: last.seq } },
      orderBy: { seq: "asc" },
      select: { seq: true, payload: true },
    });
    for (const prompt of prompts) {
      const uuid = uuidOf(prompt.payload);
      const echo =
        uuid === undefined
          ? null
          : await db.sessionEvent.findFirst({
              where: { sessionId: last.sessionId, kind: "cli", seq: { gt: prompt.seq }, payload: { contains: uuid } },
              select: { seq: true },
            });
      found.push({ sessionId: last.sessionId, seq: prompt.seq, uuid, delivered: echo !== null });
    }
  }
  return found;
}
