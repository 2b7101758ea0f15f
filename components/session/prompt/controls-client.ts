/**
 * The browser's names for the session-control commands, checked against the contract with
 * `satisfies` (components may import only types from server/shared/wire), and the limits the
 * prompt box enforces before anything is sent (the sidecar checks them again).
 */
import type { Socket } from "socket.io-client";
import type { Ack } from "@/server/shared/wire/ack";
import type { SessionControlCommand } from "@/server/shared/wire/session-controls";
import { emitCommand, type CommandName } from "../wire-client";

export const controlCommand = {
  listModels: "session:list-models",
  contextUsage: "session:context-usage",
  fileSuggestions: "session:file-suggestions",
  slashCommands: "session:slash-commands",
  setThinking: "session:set-thinking",
  cancelQueued: "session:cancel-queued",
  modelCatalog: "models:list",
} as const satisfies typeof SessionControlCommand;

export type ControlCommandName = (typeof controlCommand)[keyof typeof controlCommand];

/** Emits a control command with the same retry-by-id behaviour as the session commands. */
export function emitControl<T>(socket: Socket, name: ControlCommandName, payload: unknown): Promise<Ack<T>> {
  // The funnel is the same on the sidecar; the name table is the only difference.
  return emitCommand<T>(socket, name as unknown as CommandName, payload);
}

/** Mirrors `server/shared/wire/session-controls.ts` (values cannot be imported here). */
export const imageLimits = {
  types: ["image/png", "image/jpeg", "image/gif", "image/webp"] as const,
  maxBytes: 5 * 1024 * 1024,
  maxCount: 20,
  maxTotalBytes: 20 * 1024 * 1024,
};
