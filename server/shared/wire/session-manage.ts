/**
 * Session management over the socket (issue 13 item 4): rename, stop a background task, archive,
 * delete. Kept apart from `session.ts` so the live-session contract stays as it is; the sidecar
 * validates every payload with these schemas and the browser imports the types.
 */
import { z } from "zod";

export const SessionManageCommand = {
  rename: "session:rename",
  stopTask: "session:stop-task",
  archive: "session:archive",
  remove: "session:delete",
} as const;

/** Sent to the workspace's room when a session is archived, unarchived or deleted. */
export const SessionManageFact = {
  removed: "session:removed",
} as const;

const ZCommandId = z.string().min(8).max(64);
const ZSessionId = z.string().min(1).max(64);

/** Longest session title. */
export const maxTitleChars = 200;

export const ZRenameSession = z.object({
  sessionId: ZSessionId,
  title: z
    .string()
    .trim()
    .min(1, "A title cannot be empty.")
    .max(maxTitleChars, `A title has at most ${maxTitleChars} characters.`)
    .refine(
      (t) => ![...t].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127),
      "A title cannot contain control characters.",
    ),
  commandId: ZCommandId,
});
export type RenameSession = z.infer<typeof ZRenameSession>;

export const ZStopTask = z.object({
  sessionId: ZSessionId,
  taskId: z.string().min(1).max(200),
  commandId: ZCommandId,
});

export const ZArchiveSession = z.object({ sessionId: ZSessionId, archived: z.boolean(), commandId: ZCommandId });

export const ZDeleteSession = z.object({
  sessionId: ZSessionId,
  /** The session's id typed or confirmed by the person: a stray click deletes nothing. */
  confirm: ZSessionId,
  commandId: ZCommandId,
});

/** Reply to `session:rename`: the stored title, and whether the live CLI took it too. */
export interface RenameResult {
  title: string;
  live: boolean;
}

/** Reply to `session:archive`. */
export interface ArchiveResult {
  archived: boolean;
}

/** Reply to `session:delete`; also the `session:removed` fact. */
export interface SessionRemoved {
  sessionId: string;
  workspaceId: string;
}
