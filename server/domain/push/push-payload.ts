/**
 * What a Web Push notification says, and who wants one. Pure: the sidecar builds the payloads
 * here and encrypts them with `web-push`; the service worker (`public/sw.js`) shows them.
 */
import { z } from "zod";

/** A user's choices; a user without a stored row has {@link defaultPushSettings}. */
export const ZPushSettings = z
  .object({
    /** Approvals routed to me (my inbox). */
    approvals: z.boolean(),
    /** Turns of my prompts that finish while I have no open socket on the session. */
    finishedTurns: z.boolean(),
  })
  .strict();
export type PushSettings = z.infer<typeof ZPushSettings>;

/** Both on: a person who subscribed a browser wants to hear about their work. */
export const defaultPushSettings: PushSettings = { approvals: true, finishedTurns: true };

/** A browser's subscription as `PushSubscription.toJSON()` gives it. */
export const ZPushSubscriptionJson = z
  .object({
    endpoint: z
      .url()
      .max(2048)
      .refine((u) => u.startsWith("https://") || u.startsWith("http://"), "endpoint must be an http(s) URL"),
    expirationTime: z.number().nullable().optional(),
    keys: z.object({
      p256dh: z.string().min(1).max(256).regex(/^[A-Za-z0-9_-]+=*$/, "p256dh must be base64url"),
      auth: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+=*$/, "auth must be base64url"),
    }),
  })
  .strip();
export type PushSubscriptionJson = z.infer<typeof ZPushSubscriptionJson>;

/**
 * Whether a subscription's endpoint may be stored: push services are public https hosts. An
 * endpoint on plain http, an IP literal or localhost would make the sidecar POST into the
 * operator's own network.
 */
export function isPublicPushEndpoint(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  const host = url.hostname.toLowerCase();
  if (url.protocol !== "https:" || url.username !== "" || url.password !== "") return false;
  if (host === "localhost" || host.endsWith(".localhost") || !host.includes(".")) return false;
  // IPv4 literals (also the numeric forms URL normalises to dotted quads) and IPv6 literals
  return !/^[\d.]+$/.test(host) && !host.startsWith("[");
}

/** The JSON the service worker receives. `tag` collapses repeats of one thing on the device. */
export const ZPushPayload = z.object({
  kind: z.enum(["approval", "turn-finished"]),
  title: z.string(),
  body: z.string(),
  /** Same-origin path the notification opens. */
  url: z.string().startsWith("/"),
  tag: z.string(),
});
export type PushPayload = z.infer<typeof ZPushPayload>;

/** Push services accept about 4 KB of encrypted payload; the text is kept well under it. */
const maxBody = 180;
const maxTitle = 80;

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** The session page's path. */
export function sessionPath(workspaceSlug: string, sessionId: string): string {
  return `/w/${encodeURIComponent(workspaceSlug)}/s/${encodeURIComponent(sessionId)}`;
}

/** What the tool call is about, in one short line (a command, a path, a URL). */
function subjectOf(toolName: string, input: Record<string, unknown>): string {
  for (const key of ["command", "file_path", "notebook_path", "path", "url", "pattern", "description"]) {
    const value = input[key];
    if (typeof value === "string" && value.trim() !== "") return `${toolName}: ${value}`;
  }
  return toolName;
}

/** The notification for an approval routed to the recipient. */
export function approvalPushPayload(approval: {
  id: string;
  sessionId: string;
  toolName: string;
  input: Record<string, unknown>;
  sessionTitle: string | null;
  workspace: { slug: string; name: string };
  /** Asked by a subagent: the body says so. */
  subagent?: { description: string | null } | null;
}): PushPayload {
  const where = approval.sessionTitle ? `${approval.workspace.name} · ${approval.sessionTitle}` : approval.workspace.name;
  const subject = subjectOf(approval.toolName, approval.input);
  return {
    kind: "approval",
    title: clip(`Approval needed in ${where}`, maxTitle),
    body: clip(approval.subagent ? `Subagent${approval.subagent.description ? ` (${approval.subagent.description})` : ""}: ${subject}` : subject, maxBody),
    url: sessionPath(approval.workspace.slug, approval.sessionId),
    tag: `approval:${approval.id}`,
  };
}

/** The notification for a finished turn: its outcome and the reply's first words. */
export function turnFinishedPushPayload(turn: {
  sessionId: string;
  sessionTitle: string | null;
  workspace: { slug: string; name: string };
  isError: boolean;
  resultText: string | null;
}): PushPayload {
  const where = turn.sessionTitle ? `${turn.workspace.name} · ${turn.sessionTitle}` : turn.workspace.name;
  const fallback = turn.isError ? "The turn ended with an error." : "Claude finished the turn.";
  return {
    kind: "turn-finished",
    title: clip(`${turn.isError ? "Turn failed" : "Turn finished"} in ${where}`, maxTitle),
    body: clip(turn.resultText && turn.resultText.trim() !== "" ? turn.resultText : fallback, maxBody),
    url: sessionPath(turn.workspace.slug, turn.sessionId),
    tag: `turn:${turn.sessionId}`,
  };
}

/**
 * Whether a finished turn is pushed to the person who sent its prompt: they want it and have
 * no open socket on that session (someone watching the page sees the turn end there).
 */
export function shouldPushFinishedTurn(settings: PushSettings, watchingSession: boolean): boolean {
  return settings.finishedTurns && !watchingSession;
}

/** A push service's answer that means the subscription is gone for good. */
export function isGoneStatus(status: number): boolean {
  return status === 404 || status === 410;
}
