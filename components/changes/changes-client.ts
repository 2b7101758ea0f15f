/**
 * The browser's side of the Changes contract (server/shared/wire/changes.ts): reads over HTTP
 * (`…/sessions/<id>/changes…`), take-backs as socket commands to the sidecar. Command names are
 * re-declared and checked against the contract with `satisfies`.
 */
import type { Socket } from "socket.io-client";
import { networkErrorMessage } from "@/components/network-error";
import type { Ack } from "@/server/shared/wire/ack";
import type { ChangesCommand, ChangeScope, FileChangeDiff, SessionChanges } from "@/server/shared/wire/changes";

export type {
  ChangedFile,
  ChangeHunk,
  ChangeScope,
  FileChangeDiff,
  FileSide,
  RewindPreview,
  SessionChanges,
  TakeBackResult,
  TurnChangeView,
} from "@/server/shared/wire/changes";

export const changesCommand = {
  revertFile: "changes:revert-file",
  revertHunk: "changes:revert-hunk",
  rewind: "session:rewind",
} as const satisfies typeof ChangesCommand;

function base(slug: string, sessionId: string): string {
  return `/api/workspaces/${encodeURIComponent(slug)}/sessions/${encodeURIComponent(sessionId)}/changes`;
}

async function getData<T>(url: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { cache: "no-store" });
  } catch {
    throw new Error(networkErrorMessage);
  }
  const body = (await res.json().catch(() => null)) as { data?: T; error?: { message?: string } } | null;
  if (!res.ok || !body || body.data === undefined) throw new Error(body?.error?.message ?? `The server answered ${res.status}.`);
  return body.data;
}

export function fetchSessionChanges(slug: string, sessionId: string): Promise<SessionChanges> {
  return getData(base(slug, sessionId));
}

export function fetchFileChange(slug: string, sessionId: string, scope: ChangeScope, path: string): Promise<FileChangeDiff> {
  const q = new URLSearchParams({ path, ...("turn" in scope ? { turn: scope.turn } : { session: "1" }) });
  return getData(`${base(slug, sessionId)}/file?${q.toString()}`);
}

/** Sends a take-back command; a timeout is retried with the same commandId (no second effect). */
export async function sendChangesCommand<T>(
  socket: Socket | undefined,
  name: (typeof changesCommand)[keyof typeof changesCommand],
  payload: Record<string, unknown>,
): Promise<Ack<T>> {
  if (!socket) return { ok: false, error: { code: "unavailable", message: "Not connected yet." } };
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      return (await socket.timeout(30_000).emitWithAck(name, payload)) as Ack<T>;
    } catch {
      // timed out: again, same commandId
    }
  }
  return { ok: false, error: { code: "unavailable", message: socket.connected ? "The server did not answer in time. Try again." : "Not connected to the server." } };
}
