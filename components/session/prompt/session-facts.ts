/**
 * What the prompt box reads from the session's log: the prompts the CLI holds in its queue
 * (its `command_lifecycle` frames say `queued` until a prompt starts or is cancelled), the slash
 * commands of the latest `init`, and how many turns have ended (the context meter refreshes
 * after each). Pure, over the events in seq order.
 */
import type { WireEvent } from "@/server/shared/wire/session";

export interface QueuedPrompt {
  seq: number;
  uuid: string;
  text: string;
  author: string;
  images: number;
}

export interface SessionFacts {
  queued: QueuedPrompt[];
  /** Command names from the latest `system/init` (no descriptions there). */
  slashCommandNames: string[];
  /** Results seen: a change means a turn ended. */
  results: number;
}

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj | undefined => (typeof v === "object" && v !== null ? (v as Obj) : undefined);

export function readSessionFacts(events: readonly WireEvent[]): SessionFacts {
  const prompts = new Map<string, QueuedPrompt>();
  const state = new Map<string, string>();
  let slashCommandNames: string[] = [];
  let results = 0;
  for (const e of events) {
    const p = asObj(e.payload);
    if (!p) continue;
    if (e.kind === "prompt") {
      const uuid = typeof p.uuid === "string" ? p.uuid : undefined;
      if (uuid) {
        prompts.set(uuid, {
          seq: e.seq,
          uuid,
          text: typeof p.text === "string" ? p.text : "",
          author: e.user?.name ?? "Someone",
          images: Array.isArray(p.images) ? p.images.length : 0,
        });
      }
    } else if (e.kind === "cancel-queued" && p.cancelled === true && typeof p.uuid === "string") {
      state.set(p.uuid, "cancelled");
    } else if (e.kind === "cli") {
      if (p.type === "command_lifecycle" && typeof p.command_uuid === "string" && typeof p.state === "string") {
        state.set(p.command_uuid, p.state);
      } else if (p.type === "result") {
        results += 1;
      } else if (p.type === "system" && p.subtype === "init" && Array.isArray(p.slash_commands)) {
        slashCommandNames = p.slash_commands.filter((n): n is string => typeof n === "string" && !n.startsWith("__"));
      }
    } else if (e.kind === "process" && p.phase === "exited") {
      // a child that ended took its queue with it
      for (const [uuid, s] of state) if (s === "queued") state.set(uuid, "lost");
    }
  }
  const queued = [...prompts.values()].filter((q) => state.get(q.uuid) === "queued");
  return { queued, slashCommandNames, results };
}
