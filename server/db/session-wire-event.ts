/**
 * Event-log rows as browsers see them. The log keeps every payload whole; what goes over the
 * socket is cut down to `maxWirePayloadBytes`, keeping the JSON's shape (types, ids, the start
 * of every long text) so a trimmed tool result still renders as its card, and
 * `session:fetch-event` returns the rest.
 */
import type { SessionEventRecord } from "./session-events";
import { maxWirePayloadBytes, type WireEvent, type WireEventKind } from "@/server/shared/wire/session";

/** Options of {@link toWireEvent}. */
export interface ToWireEventOptions {
  /** The parsed payload when the caller has it already (live events), to skip a parse. */
  value?: unknown;
  /** Display name of `record.userId`. */
  userName?: string | undefined;
  /** Send the payload whole, whatever its size (`session:fetch-event`). */
  whole?: boolean;
  maxBytes?: number;
}

/** Converts a stored event to its wire form, trimming a payload over the size limit. */
export function toWireEvent(record: SessionEventRecord, options: ToWireEventOptions = {}): WireEvent {
  const maxBytes = options.maxBytes ?? maxWirePayloadBytes;
  const value = "value" in options ? options.value : parsePayload(record.payload);
  // UTF-16 length × 3 bounds the UTF-8 size: most lines skip the byte count.
  const tooLarge =
    !options.whole && record.payload.length * 3 > maxBytes && Buffer.byteLength(record.payload) > maxBytes;
  const event: WireEvent = {
    sessionId: record.sessionId,
    seq: record.seq,
    kind: record.kind as WireEventKind,
    payload: tooLarge ? trimPayload(value, maxBytes) : value,
    trimmed: tooLarge,
    at: record.createdAt.toISOString(),
  };
  if (record.userId !== null) event.user = { id: record.userId, name: options.userName ?? "" };
  return event;
}

/** A stored payload's value: its JSON, or the text itself when it is not JSON (a row edited by hand). */
export function parsePayload(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * A copy of `value` whose JSON fits in `maxBytes`: long strings are cut (with a note of how much
 * is missing) and long arrays shortened, tighter each round until it fits. Object keys are kept,
 * so `type`, `subtype` and ids survive. When nothing else fits, only the top-level `type` and
 * `subtype` remain.
 */
export function trimPayload(value: unknown, maxBytes: number = maxWirePayloadBytes): unknown {
  let stringCap = Math.max(64, Math.floor(maxBytes / 4));
  let arrayCap = 1_000;
  while (stringCap >= 16) {
    const trimmed = cut(value, stringCap, arrayCap, 0);
    if (Buffer.byteLength(JSON.stringify(trimmed) ?? "") <= maxBytes) return trimmed;
    stringCap = Math.floor(stringCap / 2);
    arrayCap = Math.max(1, Math.floor(arrayCap / 2));
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const { type, subtype } = value as { type?: unknown; subtype?: unknown };
    return {
      type: typeof type === "string" ? type.slice(0, 100) : undefined,
      subtype: typeof subtype === "string" ? subtype.slice(0, 100) : undefined,
    };
  }
  return typeof value === "string" ? value.slice(0, Math.floor(maxBytes / 4)) : null;
}

const maxDepth = 64;

function cut(value: unknown, stringCap: number, arrayCap: number, depth: number): unknown {
  if (typeof value === "string") {
    return value.length <= stringCap
      ? value
      : `${value.slice(0, stringCap)}… [${value.length - stringCap} more characters]`;
  }
  if (value === null || typeof value !== "object") return value;
  if (depth >= maxDepth) return null;
  if (Array.isArray(value)) {
    return value.slice(0, arrayCap).map((item) => cut(item, stringCap, arrayCap, depth + 1));
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = cut(item, stringCap, arrayCap, depth + 1);
  return out;
}
