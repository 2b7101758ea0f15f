/**
 * The workspace door's wire protocol: one JSON object a line each way over the door process's
 * stdin and stdout. A request names an operation (`ops/`) and its input; the answer carries the
 * value or an error. Buffers travel as `{ "$b64": … }`; the errors that callers test with
 * `instanceof` (AppError, FileConflictError, WorktreeConflictError) are rebuilt on the caller's
 * side. Both ends check what they read with zod: the door a request (its input again against the
 * operation's own schema), the caller an answer's envelope.
 */
import { z } from "zod";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { FileConflictError, WorktreeConflictError } from "@/server/shared/errors/workspace-errors";
import type { FileRead } from "@/server/shared/wire/files";

/** Longest answer line the caller reads (a 16 MB git output, base64 and JSON, fits). */
export const maxAnswerLineBytes = 96 * 1024 * 1024;
/** Longest request line the door reads (a 5 MB save as JSON, with room). */
export const maxRequestLineBytes = 32 * 1024 * 1024;

export const ZDoorRequest = z.object({
  id: z.number().int().nonnegative(),
  op: z.string().min(1).max(64),
  input: z.unknown(),
});
export type DoorRequest = z.infer<typeof ZDoorRequest>;

const ZErrorCode = z.enum(Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]]);

export const ZDoorError = z.object({
  /** Which error class to rebuild. */
  kind: z.enum(["app", "file-conflict", "worktree-conflict", "internal"]),
  code: ZErrorCode,
  message: z.string().max(10_000),
  /** FileConflictError: the file as it is now. */
  current: z.unknown().optional(),
  /** WorktreeConflictError: the conflicting files. */
  conflicts: z.array(z.string().max(4096)).max(100_000).optional(),
  details: z.unknown().optional(),
});
export type DoorError = z.infer<typeof ZDoorError>;

export const ZDoorAnswer = z.union([
  z.object({ id: z.number().int().nonnegative(), ok: z.literal(true), value: z.unknown() }),
  z.object({ id: z.number().int().nonnegative(), ok: z.literal(false), error: ZDoorError }),
]);
export type DoorAnswer = z.infer<typeof ZDoorAnswer>;

/** JSON with Buffers (and Uint8Arrays) as `{ "$b64": … }`. */
export function encodeLine(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, v: unknown) {
    const original = key === "" ? v : this[key];
    if (original instanceof Uint8Array) return { $b64: Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString("base64") };
    return v;
  });
}

/** The inverse of {@link encodeLine} (a line without a Buffer is parsed without a reviver: several times faster). */
export function decodeLine(line: string): unknown {
  if (!line.includes('"$b64"')) return JSON.parse(line);
  return JSON.parse(line, (_key, v: unknown) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === "$b64" && typeof (v as { $b64: unknown }).$b64 === "string") return Buffer.from((v as { $b64: string }).$b64, "base64");
    }
    return v;
  });
}

/** Longest error text a door sends (git's stderr can run to megabytes). */
const maxErrorChars = 4000;
const cut = (text: string) => (text.length > maxErrorChars ? `${text.slice(0, maxErrorChars)}…` : text);

/** What the door answers for a thrown value (unknown errors keep their text for the log only). */
export function errorToWire(err: unknown): DoorError {
  const wire = errorToWireWhole(err);
  return { ...wire, message: cut(wire.message), ...(wire.conflicts ? { conflicts: wire.conflicts.slice(0, 10_000).map(cut) } : {}) };
}

/**
 * A file-system error that escaped an operation: the workspace changed under it (a session
 * renamed, swapped or removed something between two steps). Said as what it is for people, never
 * as a server failure.
 */
const raceCodes: Readonly<Record<string, { code: ErrorCode; message: string }>> = {
  ENOENT: { code: ErrorCode.notFound, message: "That file or folder is no longer there (the workspace changed meanwhile)." },
  ENOTDIR: { code: ErrorCode.conflict, message: "A folder on that path was replaced meanwhile; try again." },
  ELOOP: { code: ErrorCode.conflict, message: "A link on that path leads in a loop or was swapped meanwhile; try again." },
  EEXIST: { code: ErrorCode.conflict, message: "Something is already there (the workspace changed meanwhile)." },
  ENOTEMPTY: { code: ErrorCode.conflict, message: "The folder is not empty (the workspace changed meanwhile)." },
  EISDIR: { code: ErrorCode.conflict, message: "That is a folder now (the workspace changed meanwhile)." },
};

function errorToWireWhole(err: unknown): DoorError {
  const fsCode = err instanceof Error ? (err as NodeJS.ErrnoException).code : undefined;
  const race = typeof fsCode === "string" ? raceCodes[fsCode] : undefined;
  if (race && !(err instanceof AppError)) return { kind: "app", code: race.code, message: race.message };
  if (err instanceof FileConflictError) return { kind: "file-conflict", code: err.code, message: err.message, current: err.current };
  if (err instanceof WorktreeConflictError) return { kind: "worktree-conflict", code: err.code, message: err.message, conflicts: err.conflicts };
  if (err instanceof AppError) return { kind: "app", code: err.code, message: err.message, ...(err.details === undefined ? {} : { details: err.details }) };
  if (err instanceof z.ZodError) return { kind: "app", code: ErrorCode.invalidPayload, message: `the door refused the request: ${err.issues[0]?.message ?? "invalid input"}` };
  return { kind: "internal", code: ErrorCode.internal, message: err instanceof Error ? err.message : String(err) };
}

/** The caller's error for a door's answer. `internal` keeps the door's text as its cause, never its message. */
export function errorFromWire(wire: DoorError): Error {
  switch (wire.kind) {
    case "file-conflict":
      return new FileConflictError("", (wire.current ?? null) as FileRead | null, wire.message);
    case "worktree-conflict":
      return new WorktreeConflictError(wire.message, wire.conflicts ?? []);
    case "app":
      return new AppError(wire.code, wire.message, wire.details);
    default:
      return new AppError(ErrorCode.internal, "A workspace operation failed on the server.", { cause: wire.message });
  }
}
