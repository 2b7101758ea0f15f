/**
 * The Socket.IO contract between the browser and the sidecar: event names and payload
 * schemas. Commands from the browser are imperative (`area:verb`), facts from the server are
 * past tense. The sidecar validates every payload with these schemas; the browser imports
 * the types only.
 */
import { z } from "zod";

/** Commands the browser sends, acknowledged with {@link Ack}. */
export const ClientCommand = {
  whoami: "system:whoami",
} as const;

/** `system:whoami` takes an empty object. */
export const ZWhoamiPayload = z.object({}).strict();
export type WhoamiPayload = z.infer<typeof ZWhoamiPayload>;

/** The user a socket is authenticated as. */
export interface SocketUser {
  id: string;
  email: string;
  name: string;
}

/** Handshake refusal reasons, sent as the `connect_error` message. */
export const HandshakeError = {
  unauthorized: "unauthorized",
  forbiddenOrigin: "forbidden_origin",
} as const;
