/**
 * What the socket layer asks of the sessions, as interfaces: `SessionCommands` (every command a
 * person sends to a session through `session-socket.ts`) and `SessionFeed` (what the socket layer
 * hears and how a subscriber catches up). The socket layer depends on these, never on the hub's
 * class; `SessionHub` is the local implementation of both.
 *
 * Rules for `SessionCommands`, so that a forwarding implementation (to the sidecar that holds a
 * session, over Redis) can stand in for the local one: every method is async; every argument and
 * every result is plain JSON data (no callbacks, no class instances, no Dates); every command that
 * changes a session carries the client's `commandId`, so a forwarded retry is answered once.
 * `SessionFeed` is local by nature (a callback that must join a room synchronously, listeners).
 *
 * Owns: the contract only. Must not: hold logic, or import the hub.
 */
import type { WorkspaceAccess } from "@/server/db/sessions";
import type {
  CommandAccepted,
  PermissionModeChoice,
  SessionView,
  SetModelResult,
  SetModeResult,
  WireEvent,
} from "@/server/shared/wire/session";
import type { PromptImage } from "@/server/shared/wire/session-controls";
import type { Actor, NewSessionInput, SubscribeSnapshot } from "./session-hub-types";

/** The session commands of `session-socket.ts`; the caller has authorized the actor. */
export interface SessionCommands {
  /** Creates a session in `access.workspace` (once per actor and `input.commandId`) and starts its CLI. */
  createSession(actor: Actor, access: WorkspaceAccess, input: NewSessionInput): Promise<SessionView>;
  /** Writes a prompt (with its images); starts a child, resuming the conversation, when none is live. */
  prompt(
    actor: Actor,
    sessionId: string,
    text: string,
    commandId: string,
    images?: readonly PromptImage[],
  ): Promise<CommandAccepted>;
  /** Interrupts the running turn. */
  interrupt(actor: Actor, sessionId: string, commandId: string): Promise<CommandAccepted>;
  /** Stops the CLI child; the next prompt resumes the conversation. */
  stop(actor: Actor, sessionId: string, commandId: string): Promise<CommandAccepted>;
  /** Switches the permission mode; `allowBypass` is the workspace's current setting. */
  setMode(
    actor: Actor,
    sessionId: string,
    mode: PermissionModeChoice,
    commandId: string,
    allowBypass: boolean,
  ): Promise<SetModeResult>;
  /** Switches the model. */
  setModel(actor: Actor, sessionId: string, model: string, commandId: string): Promise<SetModelResult>;
  /** One event with its whole payload (a read: no commandId). */
  fetchEvent(sessionId: string, seq: number): Promise<WireEvent>;
  /** Views of the live sessions of a workspace (a read: no commandId). */
  liveViews(workspaceId: string): Promise<SessionView[]>;
}

/** The sessions' facts and the catch-up of a subscriber; always the local hub's. */
export interface SessionFeed {
  /**
   * Reads one page of the log after `afterSeq` and hands it to `deliver`; on the last page
   * `deliver` must join the session's room synchronously (no event missed or doubled).
   */
  subscribe(sessionId: string, afterSeq: number, deliver: (snapshot: SubscribeSnapshot) => void): Promise<void>;
  /** Called with every event once it is in the log, in `seq` order per session. */
  onDidEmitEvent(listener: (event: WireEvent) => void): () => void;
  /** Called when a session's status, mode, model, title or figures change. */
  onDidChangeStatus(listener: (view: SessionView) => void): () => void;
}
