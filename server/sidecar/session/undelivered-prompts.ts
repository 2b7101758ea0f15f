/**
 * Prompts the previous sidecar accepted but no CLI answered, settled when a sidecar starts.
 *
 * The hub writes a prompt's event before it hands the text to a CLI (persist, then act). A
 * sidecar killed in between — or during the turn — leaves the prompt acknowledged to its sender
 * and never answered; its CLI is reaped by the next sidecar. This sweep gives each such prompt a
 * visible end in the session's log, before any session is loaded or any socket served:
 *
 * - `prompt-refused`: no CLI line ever named the prompt's uuid, so no CLI is known to have read
 *   it. It is not re-sent (the next CLI would run it without its sender watching, and a CLI that
 *   did read it before dying may have acted on it already); the notice asks to send it again.
 * - `turn-interrupted`: the CLI had it (a line names its uuid) but the turn never ended. Its tools
 *   may have run; the next prompt resumes the conversation.
 *
 * Both are `process` events the conversation view shows as notices, and they settle the prompts
 * before them, so a later start does not repeat them.
 */
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import { listUnansweredPrompts, type UnansweredPrompt } from "@/server/db/unanswered-prompts";
import type { SessionEventWriter } from "./session-event-writer";

/** The payload of the notice a sweep appends for one prompt. */
export interface UnansweredPromptNotice {
  phase: "prompt-refused" | "turn-interrupted";
  promptSeq: number;
  promptUuid?: string;
  reason: string;
}

/**
 * Why the prompts were left: this sidecar restarted, or (cluster) the sidecar that ran the
 * session died and another one adopted its sessions (server/sidecar/cluster/adoption.ts).
 */
export type UnansweredCause = "restart" | "failover";

export function noticeFor(prompt: UnansweredPrompt, cause: UnansweredCause = "restart"): UnansweredPromptNotice {
  const base = { promptSeq: prompt.seq, ...(prompt.uuid !== undefined ? { promptUuid: prompt.uuid } : {}) };
  if (prompt.delivered) {
    return { ...base, phase: "turn-interrupted", reason: interruptedReasons[cause] };
  }
  return { ...base, phase: "prompt-refused", reason: refusedReasons[cause] };
}

const interruptedReasons: Record<UnansweredCause, string> = {
  restart:
    "The sidecar restarted during this turn and its CLI was stopped, so the turn did not finish. Tools it started may have run. The next prompt resumes the conversation.",
  failover:
    "The sidecar running this session stopped responding during this turn, so the turn did not finish; another sidecar took the session over. Tools it started may have run. The next prompt resumes the conversation.",
};

const refusedReasons: Record<UnansweredCause, string> = {
  restart:
    "This prompt was not delivered: the sidecar restarted before Claude received it, so nothing ran. Send it again to continue; the conversation resumes.",
  failover:
    "This prompt was not delivered: the sidecar running this session stopped responding before Claude received it, so nothing ran; another sidecar took the session over. Send it again to continue; the conversation resumes.",
};

/**
 * Appends a notice for every unanswered prompt of `sidecarId`'s sessions through `writer` (the
 * hub's, so seqs continue the log). Returns the notices written. Call once at start, before the
 * hub loads sessions.
 */
export async function settleUnansweredPrompts(deps: {
  db: Db;
  writer: SessionEventWriter;
  sidecarId: string;
  log: Pick<Logger, "info" | "error">;
  cause?: UnansweredCause;
  /** Only these sessions (an adopter settles those it holds). */
  sessionIds?: readonly string[];
}): Promise<UnansweredPromptNotice[]> {
  const only = deps.sessionIds === undefined ? undefined : new Set(deps.sessionIds);
  const prompts = (await listUnansweredPrompts(deps.db, deps.sidecarId)).filter((p) => only === undefined || only.has(p.sessionId));
  const notices: UnansweredPromptNotice[] = [];
  for (const prompt of prompts) {
    const notice = noticeFor(prompt, deps.cause);
    await deps.writer.append({
      sessionId: prompt.sessionId,
      kind: "process",
      payload: JSON.stringify(notice),
      value: notice,
      commandId: null,
      userId: null,
    });
    deps.log.info(
      { sessionId: prompt.sessionId, promptSeq: prompt.seq, phase: notice.phase },
      "settled a prompt the previous sidecar left unanswered",
    );
    notices.push(notice);
  }
  return notices;
}
