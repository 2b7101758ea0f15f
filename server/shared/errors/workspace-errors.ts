/**
 * The errors of workspace operations that carry more than a code and a message. They are thrown
 * inside the workspace door (`server/workspace-agent`) and rebuilt on the caller's side from the
 * door's answer, so both processes test them with `instanceof`.
 */
import type { FileRead } from "@/server/shared/wire/files";
import { AppError, ErrorCode } from "./app-error";

/** A save refused because the file is no longer the version the editor started from. */
export class FileConflictError extends AppError {
  /** What the file holds now (`null` when it was deleted meanwhile). */
  readonly current: FileRead | null;
  constructor(rel: string, current: FileRead | null, message?: string) {
    super(ErrorCode.conflict, message ?? (current ? `${rel} changed on disk since you opened it.` : `${rel} was deleted since you opened it.`));
    this.name = "FileConflictError";
    this.current = current;
  }
}

/** A failed merge or rebase (already aborted): 409 with the conflicting files. */
export class WorktreeConflictError extends AppError {
  readonly conflicts: string[];
  constructor(message: string, conflicts: string[]) {
    super(ErrorCode.conflict, message, { conflicts });
    this.name = "WorktreeConflictError";
    this.conflicts = conflicts;
  }
}
