/**
 * The CLI's own controls, offered per session: the model list, context usage, file
 * suggestions for `@` mentions, the slash commands with their descriptions, the thinking
 * budget, and cancelling a prompt the CLI has queued. Each is one control request on the
 * session's live child (through the runner's control channel); changes are logged as session
 * commands through the hub (idempotent by `commandId`, the person named on the event).
 *
 * Authorization is the caller's (the socket layer); this module trusts the actor it is given.
 */
import { realpath } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import { findSessionEvent } from "@/server/db/session-events";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type {
  CancelQueuedResult,
  ContextUsage,
  FileSuggestions,
  ModelList,
  ModelOption,
  SetThinkingResult,
  SlashCommandInfo,
  SlashCommandList,
} from "@/server/shared/wire/session-controls";
import type { WireEvent } from "@/server/shared/wire/session";
import { workspaceDoor } from "@/server/workspace-agent";
import type { Actor, SessionHub } from "./session-hub";
import type { SessionRunner } from "./session-runner-contract";
import { workspaceFilesScope } from "./workspace-files-scope";

export interface SessionControlsDeps {
  hub: SessionHub;
  db: Db;
  log: Logger;
  /**
   * File and folder names under the session's working directory containing `query`, read from
   * disk now (folders end with `/`). Default: the workspace's files door (`files.search`).
   */
  searchNames?: (sessionId: string, query: string) => Promise<string[]>;
  /** How long the CLI's file index gets to finish its first build (default 2.5 s). */
  indexWaitMs?: number;
}

/** Longest description kept per slash command (some skills describe themselves in pages). */
const maxDescriptionChars = 240;
/** How long one context-usage answer serves every ask while the session's log stays still. */
export const contextAnswerMaxAgeMs = 10_000;
/** Most suggestions handed to a browser per query. */
const maxSuggestions = 50;
/** How long the CLI's file index gets to finish its first build before its answer stands. */
const defaultIndexWaitMs = 2_500;
/** Between two asks while the CLI's index builds. */
const indexPollMs = 250;

/** The session controls; `close()` detaches from the hub. */
export class SessionControls {
  /** The last model list any CLI of this sidecar gave (the list depends on the binary and the account, not the session). */
  private catalog: ModelOption[] | undefined;
  /** Per session: the slash commands its current child announced. */
  private readonly commands = new Map<string, SlashCommandInfo[]>();
  /** Per session: the thinking budget a person set, applied again to every new child. */
  private readonly thinking = new Map<string, number | null>();
  /** Per session: events logged that may change what fills the context (control exchanges aside). */
  private readonly contextVersion = new Map<string, number>();
  /** Per session: the last context-usage ask, answered or in flight, and the version it was asked at. */
  private readonly contextAsked = new Map<string, { version: number; answer: Promise<ContextUsage>; at: number }>();
  /** The children whose file index has answered a name: their empty answers stand at once. */
  private readonly indexed = new WeakSet<SessionRunner>();
  private readonly detach: () => void;

  constructor(private readonly deps: SessionControlsDeps) {
    this.detach = deps.hub.onDidEmitEvent((event) => this.onEvent(event));
  }

  close(): void {
    this.detach();
    this.commands.clear();
    this.thinking.clear();
    this.contextVersion.clear();
    this.contextAsked.clear();
  }

  /** The models the session's CLI offers (`list_models`); without a live child, the last list known. */
  async listModels(sessionId: string): Promise<ModelList> {
    return this.modelsFrom(await this.deps.hub.liveRunner(sessionId));
  }

  /** The model list for a session not yet created: from any live CLI, else the last one known. */
  async modelCatalog(): Promise<ModelList> {
    if (this.catalog) return { models: this.catalog, source: "cache" };
    return this.modelsFrom(this.deps.hub.someLiveRunner());
  }

  /**
   * How full the context window is (`get_context_usage`, summary), by category. Every viewer's
   * meter asks after each turn, and the CLI counts tokens for each ask (a few dozen
   * `count_tokens` calls to the API), so one answer serves all asks until the session's log
   * moves on (the control exchanges themselves aside) or it is {@link contextAnswerMaxAgeMs} old
   * (what fills the context can change without an event: a memory file edited, an MCP server
   * connected; the meter's refresh then counts again).
   */
  async contextUsage(sessionId: string): Promise<ContextUsage> {
    const version = this.contextVersion.get(sessionId) ?? 0;
    const asked = this.contextAsked.get(sessionId);
    if (asked?.version === version && Date.now() - asked.at < contextAnswerMaxAgeMs) return asked.answer;
    const answer = this.requireLive(sessionId)
      .then((runner) => runner.control({ subtype: "get_context_usage" }))
      .then(toContextUsage);
    this.contextAsked.set(sessionId, { version, answer, at: Date.now() });
    answer.catch(() => {
      if (this.contextAsked.get(sessionId)?.answer === answer) this.contextAsked.delete(sessionId);
    });
    return answer;
  }

  /**
   * File and folder names under the session's directory matching `query`, for `@` mentions: the
   * CLI's fuzzy `file_suggestions` (what its terminal shows) first, then the names on disk that
   * contain the query and the CLI did not name.
   *
   * Why both: the CLI answers from a file index it only starts to build on the first ask (and
   * again in every new child: a restart, a resume after an idle cull), so those first asks
   * answer nothing (measured with 2.1.332: `[]` for ~1 s, then the file); its index is also
   * refreshed at most every 5 s, and not at all without a live child. The disk search sees
   * every file there is now, live child or not. While the index builds, the CLI is asked
   * again for up to {@link defaultIndexWaitMs}, so its ranking is not lost on a cold start.
   */
  async fileSuggestions(sessionId: string, query: string): Promise<FileSuggestions> {
    const [fromCli, onDisk] = await Promise.all([
      this.cliSuggestions(sessionId, query),
      query.trim() === "" ? Promise.resolve([]) : this.diskSuggestions(sessionId, query),
    ]);
    // No live CLI and no disk search to stand in: say why, as before.
    if (fromCli instanceof Error && onDisk === undefined) throw fromCli;
    const seen = new Set<string>();
    const suggestions: { path: string }[] = [];
    for (const name of [...(fromCli instanceof Error ? [] : fromCli), ...(onDisk ?? [])]) {
      if (!name || name.includes("\0") || seen.has(name)) continue;
      seen.add(name);
      suggestions.push({ path: name });
      if (suggestions.length >= maxSuggestions) break;
    }
    return { suggestions };
  }

  /** The CLI's fuzzy answer, asked again while its index builds; an Error when it cannot be asked. */
  private async cliSuggestions(sessionId: string, query: string): Promise<string[] | Error> {
    const runner = await this.deps.hub.liveRunner(sessionId).catch((err: unknown) => err as Error);
    if (runner instanceof Error) return runner;
    if (!runner) return notRunning();
    const waitUntil = Date.now() + (this.deps.indexWaitMs ?? defaultIndexWaitMs);
    for (;;) {
      let paths: string[];
      try {
        paths = suggestionPaths(await runner.control({ subtype: "file_suggestions", query }));
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
      // an empty query lists the top folder (not from the index); a found name stands
      if (query.trim() === "") return paths;
      if (paths.length > 0) this.indexed.add(runner);
      if (paths.length > 0 || this.indexed.has(runner) || Date.now() + indexPollMs > waitUntil) return paths;
      await new Promise((r) => setTimeout(r, indexPollMs));
    }
  }

  /** Names on disk containing the query; undefined when the disk cannot be searched (logged). */
  private async diskSuggestions(sessionId: string, query: string): Promise<string[] | undefined> {
    try {
      return await (this.deps.searchNames ?? ((id, q) => searchSessionNames(this.deps.db, id, q)))(sessionId, query);
    } catch (err) {
      this.deps.log.warn({ err, sessionId }, "searching file names for @ mentions failed");
      return undefined;
    }
  }

  /**
   * The slash commands with descriptions, from the CLI's `initialize` answer (the per-turn
   * `init` message names them without descriptions). Asked once per child.
   */
  async slashCommands(sessionId: string): Promise<SlashCommandList> {
    const known = this.commands.get(sessionId);
    if (known) return { commands: known };
    const answer = await (await this.requireLive(sessionId)).control({ subtype: "initialize" });
    const commands = toSlashCommands(answer.commands);
    this.commands.set(sessionId, commands);
    return { commands };
  }

  /** Sets the thinking budget of the live child (`set_max_thinking_tokens`) and keeps it for later children. */
  setThinking(actor: Actor, sessionId: string, budget: number | null, commandId: string): Promise<SetThinkingResult> {
    return this.deps.hub.recordCommand(actor, sessionId, commandId, "set-thinking", async (runner) => {
      if (runner) await runner.control({ subtype: "set_max_thinking_tokens", max_thinking_tokens: budget });
      this.thinking.set(sessionId, budget);
      return {
        record: { maxThinkingTokens: budget, live: runner !== undefined },
        reply: (seq) => ({ seq, maxThinkingTokens: budget }),
      };
    });
  }

  /**
   * Withdraws a prompt the CLI holds in its queue (`cancel_async_message`). The CLI answers
   * `cancelled: false` when the prompt has already started (or ended); that is an outcome,
   * not an error, and the log records it either way.
   */
  async cancelQueued(actor: Actor, sessionId: string, promptSeq: number, commandId: string): Promise<CancelQueuedResult> {
    const prompt = await findSessionEvent(this.deps.db, sessionId, promptSeq);
    const uuid = prompt?.kind === "prompt" ? promptUuid(prompt.payload) : undefined;
    if (!uuid) throw new AppError(ErrorCode.notFound, `This session has no prompt at event ${promptSeq}.`);
    return this.deps.hub.recordCommand(actor, sessionId, commandId, "cancel-queued", async (runner) => {
      if (!runner) throw notRunning();
      const answer = await runner.control({ subtype: "cancel_async_message", message_uuid: uuid });
      const cancelled = answer.cancelled === true;
      return {
        record: { promptSeq, uuid, cancelled },
        reply: (seq) => ({ seq, cancelled }),
      };
    });
  }

  private async modelsFrom(runner: SessionRunner | undefined): Promise<ModelList> {
    if (runner) {
      try {
        const models = toModelOptions((await runner.control({ subtype: "list_models" })).models);
        if (models.length > 0) {
          this.catalog = models;
          return { models, source: "cli" };
        }
      } catch (err) {
        // A busy or exiting child: the last list known is as good an answer.
        this.deps.log.warn({ err }, "list_models failed");
      }
    }
    return this.catalog ? { models: this.catalog, source: "cache" } : { models: [], source: "none" };
  }

  private async requireLive(sessionId: string): Promise<SessionRunner> {
    const runner = await this.deps.hub.liveRunner(sessionId);
    if (!runner) throw notRunning();
    return runner;
  }

  /** A new child knows nothing of the last one's settings: its commands are asked again, its thinking budget set again. */
  private onEvent(event: WireEvent): void {
    if (!isControlExchange(event)) this.contextVersion.set(event.sessionId, (this.contextVersion.get(event.sessionId) ?? 0) + 1);
    if (event.kind !== "process") return;
    const phase = (event.payload as { phase?: unknown } | null)?.phase;
    if (phase === "exited") {
      this.contextVersion.delete(event.sessionId);
      this.contextAsked.delete(event.sessionId);
    }
    if (phase !== "spawned") return;
    this.commands.delete(event.sessionId);
    const budget = this.thinking.get(event.sessionId);
    if (budget === undefined) return;
    // The hub adopts a new runner once its start resolves, which may be just after this event is stored.
    const runnerSoon = async () =>
      (await this.deps.hub.liveRunner(event.sessionId)) ??
      (await new Promise((r) => setTimeout(r, 250)).then(() => this.deps.hub.liveRunner(event.sessionId)));
    void runnerSoon()
      .then((runner) => runner?.control({ subtype: "set_max_thinking_tokens", max_thinking_tokens: budget }))
      .catch((err: unknown) =>
        this.deps.log.warn({ err, sessionId: event.sessionId }, "setting the thinking budget of a new CLI failed"),
      );
  }
}

/** The paths of a `file_suggestions` answer (relative to the CLI's cwd; folders end with `/`). */
function suggestionPaths(answer: Record<string, unknown>): string[] {
  const list = Array.isArray(answer.suggestions) ? answer.suggestions : [];
  const paths: string[] = [];
  for (const item of list) {
    const name = typeof item === "object" && item !== null ? (item as { path?: unknown }).path : undefined;
    if (typeof name === "string" && name && !name.includes("\0")) paths.push(name);
    if (paths.length >= maxSuggestions) break;
  }
  return paths;
}

/**
 * Names containing `query` in the session's directory, through the workspace's files door
 * (`files.search`, bounded): the workspace root's, without Conduit's own `.conduit/` (the
 * session worktrees live there); for a session in a worktree, the names inside that worktree,
 * relative to it (its CLI's cwd).
 */
export async function searchSessionNames(db: Db, sessionId: string, query: string): Promise<string[]> {
  const row = await db.session.findUnique({
    where: { id: sessionId },
    select: { worktreePath: true, workspace: { select: { id: true, rootPath: true } } },
  });
  if (!row) return [];
  const scope = await workspaceFilesScope(db, row.workspace);
  const found = await workspaceDoor().call(scope, "files.search", { query });
  const root = scope.workspace?.root ?? row.workspace.rootPath;
  const worktree = row.worktreePath ? path.relative(root, await realpath(row.worktreePath).catch(() => row.worktreePath!)) : undefined;
  const under = worktree && !worktree.startsWith("..") && !path.isAbsolute(worktree) ? `${worktree.split(path.sep).join("/")}/` : undefined;
  const paths: string[] = [];
  for (const m of found.matches) {
    const rel = under ? (m.path.startsWith(under) ? m.path.slice(under.length) : undefined) : m.path.startsWith(".conduit/") ? undefined : m.path;
    if (rel) paths.push(m.kind === "dir" ? `${rel}/` : rel);
  }
  return paths;
}

/** A control request or answer between the sidecar and the CLI: it changes no conversation. */
function isControlExchange(event: WireEvent): boolean {
  if (event.kind !== "cli") return false;
  const type = (event.payload as { type?: unknown } | null)?.type;
  return type === "control_request" || type === "control_response" || type === "control_cancel_request";
}

function notRunning(): AppError {
  return new AppError(ErrorCode.conflict, "This session's CLI is not running; send a prompt to start it.");
}

function promptUuid(payload: string): string | undefined {
  try {
    const value = JSON.parse(payload) as { uuid?: unknown };
    return typeof value.uuid === "string" ? value.uuid : undefined;
  } catch {
    return undefined;
  }
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** The CLI's `list_models` entries, as the picker shows them. */
export function toModelOptions(raw: unknown): ModelOption[] {
  if (!Array.isArray(raw)) return [];
  const models: ModelOption[] = [];
  for (const item of raw) {
    if (typeof item !== "object" || item === null) continue;
    const m = item as Record<string, unknown>;
    const value = str(m.value);
    if (!value) continue;
    models.push({
      value,
      displayName: str(m.displayName) ?? value,
      ...(str(m.resolvedModel) ? { resolvedModel: str(m.resolvedModel) } : {}),
      ...(str(m.description) ? { description: str(m.description) } : {}),
      ...(m.supportsAdaptiveThinking === true ? { adaptiveThinking: true } : {}),
    });
  }
  return models;
}

/** `get_context_usage` reduced to what the meter shows (the grid and per-file details stay behind). */
export function toContextUsage(raw: Record<string, unknown>): ContextUsage {
  const categories = Array.isArray(raw.categories)
    ? raw.categories.flatMap((c) => {
        if (typeof c !== "object" || c === null) return [];
        const cat = c as Record<string, unknown>;
        const name = str(cat.name);
        return name ? [{ name, tokens: num(cat.tokens), kind: str(cat.kind) ?? "used" }] : [];
      })
    : [];
  const maxTokens = num(raw.maxTokens);
  const totalTokens = num(raw.totalTokens);
  const reported = typeof raw.percentage === "number" ? raw.percentage : maxTokens > 0 ? (totalTokens / maxTokens) * 100 : 0;
  return {
    totalTokens,
    maxTokens,
    percentage: Math.max(0, Math.min(100, Math.round(reported))),
    ...(str(raw.model) ? { model: str(raw.model) } : {}),
    categories,
  };
}

/** The `initialize` answer's commands, descriptions shortened; internal ones (`__…`) left out. */
export function toSlashCommands(raw: unknown): SlashCommandInfo[] {
  if (!Array.isArray(raw)) return [];
  const commands: SlashCommandInfo[] = [];
  for (const item of raw) {
    if (typeof item !== "object" || item === null) continue;
    const c = item as Record<string, unknown>;
    const name = str(c.name);
    if (!name || name.startsWith("__")) continue;
    const description = str(c.description);
    commands.push({
      name,
      ...(description
        ? { description: description.length > maxDescriptionChars ? `${description.slice(0, maxDescriptionChars - 1)}…` : description }
        : {}),
      ...(str(c.argumentHint) ? { argumentHint: str(c.argumentHint) } : {}),
    });
  }
  return commands;
}
