/**
 * What the prompt box and the session's controls read from the session's log: the prompts the
 * CLI holds in its queue (its `command_lifecycle` frames say `queued` until a prompt starts or is
 * cancelled), the slash commands of the latest `init`, how many turns have ended (the context
 * meter refreshes after each), the thinking budget last set and the model in force. Folded event
 * by event over the log in seq order; {@link SessionFactsFolder} folds only what was appended since
 * the last call, as the conversation does (incremental-conversation.ts).
 */
import type { WireEvent } from "@/server/shared/wire/session";
import { extendsLog } from "../incremental-conversation";

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
  /** The budget of the latest successful set-thinking: a number, `null` (the CLI's default), or never set. */
  thinking: number | null | undefined;
  /**
   * The model in force: the latest of the CLI's `init` (the resolved id) and a confirmed switch
   * (what was asked for, until the next turn's `init` names its resolved id).
   */
  currentModel: string | undefined;
}

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj | undefined => (typeof v === "object" && v !== null ? (v as Obj) : undefined);

/** The facts of a whole log. */
export function readSessionFacts(events: readonly WireEvent[]): SessionFacts {
  const folder = new SessionFactsFolder();
  return folder.update(events);
}

/**
 * The facts of a log that grows: `update` with the log appended to folds only the new events;
 * with any other log (earlier pages read, a reset) it folds the log again. The facts object, and
 * each of its arrays, keep their identity while the new events change none of them, so what the
 * page derives from them is not derived again for every streamed delta.
 */
export class SessionFactsFolder {
  private folded: readonly WireEvent[] = [];
  private prompts = new Map<string, QueuedPrompt>();
  private state = new Map<string, string>();
  private facts: SessionFacts = { queued: [], slashCommandNames: [], results: 0, thinking: undefined, currentModel: undefined };

  update(events: readonly WireEvent[]): SessionFacts {
    if (events === this.folded) return this.facts;
    if (!extendsLog(this.folded, events)) {
      this.prompts = new Map();
      this.state = new Map();
      this.facts = { queued: [], slashCommandNames: [], results: 0, thinking: undefined, currentModel: undefined };
      this.folded = [];
    }
    let next: SessionFacts | undefined;
    let queueChanged = false;
    const change = (fields: Partial<SessionFacts>) => {
      next = { ...(next ?? this.facts), ...fields };
    };
    for (let i = this.folded.length; i < events.length; i++) {
      const e = events[i]!;
      const p = asObj(e.payload);
      if (!p) continue;
      if (e.kind === "prompt") {
        const uuid = typeof p.uuid === "string" ? p.uuid : undefined;
        if (uuid) {
          this.prompts.set(uuid, {
            seq: e.seq,
            uuid,
            text: typeof p.text === "string" ? p.text : "",
            author: e.user?.name ?? "Someone",
            images: Array.isArray(p.images) ? p.images.length : 0,
          });
          queueChanged = true;
        }
      } else if (e.kind === "cancel-queued" && p.cancelled === true && typeof p.uuid === "string") {
        this.state.set(p.uuid, "cancelled");
        queueChanged = true;
      } else if (e.kind === "cli") {
        if (p.type === "command_lifecycle" && typeof p.command_uuid === "string" && typeof p.state === "string") {
          this.state.set(p.command_uuid, p.state);
          queueChanged = true;
        } else if (p.type === "result") {
          change({ results: (next ?? this.facts).results + 1 });
        } else if (p.type === "system" && p.subtype === "init") {
          // every turn starts with an init: the facts change only when what it names does
          if (Array.isArray(p.slash_commands)) {
            const names = p.slash_commands.filter((n): n is string => typeof n === "string" && !n.startsWith("__"));
            const held = (next ?? this.facts).slashCommandNames;
            if (names.length !== held.length || names.some((n, i) => n !== held[i])) change({ slashCommandNames: names });
          }
          if (typeof p.model === "string" && p.model !== (next ?? this.facts).currentModel) change({ currentModel: p.model });
        }
      } else if (e.kind === "process" && p.phase === "exited") {
        // a child that ended took its queue with it
        for (const [uuid, s] of this.state) if (s === "queued") this.state.set(uuid, "lost");
        queueChanged = true;
      } else if (e.kind === "set-thinking" && p.error === undefined) {
        change({ thinking: typeof p.maxThinkingTokens === "number" ? p.maxThinkingTokens : null });
      } else if (e.kind === "set-model" && p.error === undefined && typeof p.model === "string") {
        change({ currentModel: p.model });
      }
    }
    if (queueChanged) {
      const queued = [...this.prompts.values()].filter((q) => this.state.get(q.uuid) === "queued");
      const same = queued.length === this.facts.queued.length && queued.every((q, i) => q === this.facts.queued[i]);
      if (!same) change({ queued });
    }
    this.folded = events;
    if (next) this.facts = next;
    return this.facts;
  }
}
