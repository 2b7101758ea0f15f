/**
 * Idempotent session commands: each command a person sends to a session runs once per
 * `commandId`. A retry while this sidecar remembers it gets the same promise (the entry's
 * command memo); an older one is answered from the event it logged.
 *
 * Owns: the per-session command memo and rebuilding a first outcome from the log
 * (`outcomeFromLog`). Must not: log anything itself (the command's `run` does), or check who
 * may run it (the socket layer authorizes).
 */
import type { Db } from "@/server/db/client";
import { findSessionCommand, type SessionEventRecord } from "@/server/db/session-events";
import { AppError, type WireError } from "@/server/shared/errors/app-error";
import type { WireEventKind } from "@/server/shared/wire/session";
import { reusedCommandId, safeParse, shuttingDown, type SessionEntry } from "./session-entry";
import type { SessionRegistry } from "./session-registry";

export class SessionCommandRunner {
  constructor(private readonly deps: { db: Db; registry: SessionRegistry; isClosed: () => boolean }) {}

  /** Runs `run` once for this session's `commandId`; `kind` must match the first use of the id. */
  run<R>(
    sessionId: string,
    commandId: string,
    kind: WireEventKind,
    run: (entry: SessionEntry) => Promise<R>,
  ): Promise<R> {
    return (async () => {
      if (this.deps.isClosed()) throw shuttingDown();
      const entry = await this.deps.registry.entry(sessionId);
      const known = entry.commands.get(commandId);
      if (known) {
        if (known.kind !== kind) throw reusedCommandId();
        return known.outcome as Promise<R>;
      }
      const outcome = (async () => {
        const prior = await findSessionCommand(this.deps.db, sessionId, commandId);
        if (prior) return outcomeFromLog(prior, kind) as R;
        return run(entry);
      })();
      entry.commands.remember(commandId, { kind, outcome });
      return outcome;
    })();
  }
}

/** The first outcome of a command, rebuilt from the event it logged. */
export function outcomeFromLog(event: SessionEventRecord, kind: WireEventKind): unknown {
  if (event.kind !== kind) throw reusedCommandId();
  const payload = safeParse(event.payload) as { error?: WireError; mode?: string; model?: string } | undefined;
  if (payload?.error) throw new AppError(payload.error.code, payload.error.message);
  if (kind === "set-mode") return { seq: event.seq, mode: payload?.mode ?? "" };
  if (kind === "set-model") return { seq: event.seq, model: payload?.model ?? "" };
  if (kind === "set-thinking" || kind === "cancel-queued") return { ...(payload ?? {}), seq: event.seq };
  return { seq: event.seq };
}
