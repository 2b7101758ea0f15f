/**
 * The Changes contract (issue 12): what a session changed in its workspace's files, per turn and
 * for the whole session, read through `/api/workspaces/<slug>/sessions/<id>/changes…`, and the
 * take-back commands (revert a file or a hunk, rewind before a prompt) sent over the socket to
 * the sidecar, which owns the workspace's shadow repository.
 */
import { z } from "zod";

/** Files larger than this are listed with their status, never diffed. */
export const maxDiffedFileBytes = 1024 * 1024;

/** One file a turn (or a session) added, modified or deleted. */
export interface ChangedFile {
  /** workspace-relative, `/`-separated */
  path: string;
  status: "added" | "modified" | "deleted";
  /** lines; 0 for binary and large files */
  insertions: number;
  deletions: number;
  binary: boolean;
  /** larger than {@link maxDiffedFileBytes} before or after */
  large: boolean;
}

/** One recorded step of a session's changes: a turn, or a take-back by a person. */
export interface TurnChangeView {
  id: string;
  kind: "turn" | "revert" | "rewind";
  /** The prompt event that started the turn (or, for a rewind, the prompt rewound to). */
  promptSeq: number | null;
  /** `unknown`: a snapshot failed, so what this turn changed is not known. */
  status: "ok" | "unknown";
  files: ChangedFile[];
  createdAt: string;
}

/** `GET …/changes`: every turn, and the whole session (first before → latest after). */
export interface SessionChanges {
  turns: TurnChangeView[];
  session: { files: ChangedFile[]; status: "ok" | "unknown" | "none" };
  /** The caller may revert and rewind (owner or editor). */
  canTakeBack: boolean;
}

/** Which change a file diff or a take-back is about: one turn (by its prompt seq) or the whole session. */
export const ZChangeScope = z.union([
  z.object({ turn: z.string().min(1).max(64) }),
  z.object({ session: z.literal(true) }),
]);
export type ChangeScope = z.infer<typeof ZChangeScope>;

/** One side of a file diff: text, or why there is none. */
export type FileSide =
  | { kind: "absent" }
  | { kind: "text"; content: string }
  | { kind: "binary" | "too_large"; size: number };

/** A line hunk of a file's change (jsdiff's `structuredPatch`, 3 lines of context). */
export interface ChangeHunk {
  index: number;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
}

/** `GET …/changes/file?path=&turn=|session=1`: a file before and after, for a diff. */
export interface FileChangeDiff {
  path: string;
  before: FileSide;
  after: FileSide;
  hunks: ChangeHunk[];
}

export const ChangesCommand = {
  revertFile: "changes:revert-file",
  revertHunk: "changes:revert-hunk",
  rewind: "session:rewind",
} as const;

const ZCommandId = z.string().min(8).max(64);
const ZSessionId = z.string().min(1).max(64);
const ZPath = z.string().min(1).max(1024);

export const ZRevertFile = z.object({ sessionId: ZSessionId, scope: ZChangeScope, path: ZPath, commandId: ZCommandId });
export type RevertFile = z.infer<typeof ZRevertFile>;

export const ZRevertHunk = z.object({
  sessionId: ZSessionId,
  scope: ZChangeScope,
  path: ZPath,
  hunk: z.number().int().min(0).max(100_000),
  commandId: ZCommandId,
});
export type RevertHunk = z.infer<typeof ZRevertHunk>;

/**
 * `session:rewind`: without `confirm`, a dry run answering a {@link RewindPreview}; with it, the
 * workspace's files go back to how they were before prompt `promptSeq`. Conflicting files are
 * left alone unless `includeConflicts`.
 */
export const ZRewind = z.object({
  sessionId: ZSessionId,
  promptSeq: z.number().int().min(1),
  confirm: z.boolean().default(false),
  includeConflicts: z.boolean().default(false),
  commandId: ZCommandId,
});
export type Rewind = z.infer<typeof ZRewind>;

/** What a rewind would do: the files it changes back (their current content is lost) and the conflicts. */
export interface RewindPreview {
  promptSeq: number;
  /** Each file as the rewind changes it: `added` = it comes back, `deleted` = it goes away. */
  files: ChangedFile[];
  insertions: number;
  deletions: number;
  /** Files changed since this session's latest snapshot (by a person or another session). */
  conflicts: string[];
  /** Why this prompt cannot be rewound to (no snapshot from before it); nothing else is set then. */
  unavailable?: string;
}

/** The answer to a confirmed rewind or a revert. */
export interface TakeBackResult {
  /** Files written or removed. */
  changed: string[];
  /** Conflicting files left as they are. */
  skipped: string[];
  /** The seq of the event it logged in the conversation, when it logged one. */
  seq?: number;
}

/** Payload of the `rewind` session event. */
export interface RewindEventPayload {
  promptSeq: number;
  files: ChangedFile[];
  insertions: number;
  deletions: number;
  skipped: string[];
}

/** Payload of the `changes` session event written after a turn's result. */
export interface TurnChangesEventPayload {
  turnId: string;
  promptSeq: number | null;
  status: "ok" | "unknown";
  files: ChangedFile[];
}
