/**
 * Idempotent session commands: each command a person sends to a session runs once per
 * `commandId`. A retry while this sidecar remembers it gets the same promise (the entry's
 * command memo); an older one (or one another sidecar ran) is answered from the event it logged,
 * and from the failure noted after it when its effect failed (a prompt no CLI took: the retry
 * gets that error again, not an acceptance of a prompt nothing will answer).
 *
 * Owns: the per-session command memo and rebuilding a first outcome from the log
 * (`outcomeFromLog`). Must not: log anything itself (the command's `run` does), or check who
 * may run it (the socket layer authorizes).
 */
import type { Db } from "@/server/db/client";
import { findCommandFailure, findSessionCommand, type SessionEventRecord } from "@/server/db/session-events";
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
        if (!prior) return run(entry);
        const failure = failsAfterLogging.has(prior.kind)
          ? await findCommandFailure(this.deps.db, sessionId, prior.kind, prior.seq)
          : undefined;
        return outcomeFromLog(prior, kind, failure) as R;
      })();
      entry.commands.remember(commandId, { kind, outcome });
      return outcome;
    })();
  }
}

/** Commands whose effect may fail after they are logged (the hub then notes `command-failed`). */
const failsAfterLogging: ReadonlySet<string> = new Set<WireEventKind>(["prompt", "interrupt", "stop"]);

/** The first outcome of a command, rebuilt from the event it logged and the failure noted after it, if any. */
export function outcomeFromLog(event: SessionEventRecord, kind: WireEventKind, failure?: WireError): unknown {
  if (event.kind !== kind) throw reusedCommandId();
  if (failure) throw new AppError(failure.code, failure.message);
  const payload = safeParse(event.payload) as { error?: WireError; mode?: string; model?: string } | undefined;
  if (payload?.error) throw new AppError(payload.error.code, payload.error.message);
  if (kind === "set-mode") return { seq: event.seq, mode: payload?.mode ?? "" };
  if (kind === "set-model") return { seq: event.seq, model: payload?.model ?? "" };
  if (kind === "set-thinking" || kind === "cancel-queued") return { ...(payload ?? {}), seq: event.seq };
  return { seq: event.seq };
}
