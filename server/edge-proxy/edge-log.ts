/**
 * One thing the edge wants an operator to know. Paths are logged without their query
 * string and headers never are: both can carry tokens.
 */
export interface EdgeLogEntry {
  level: "info" | "warn" | "error";
  event:
    | "upstream_unavailable"
    | "upstream_timeout"
    | "client_aborted"
    | "rate_limited"
    | "socket_refused"
    | "request_refused"
    | "host_refused"
    | "upgrade_failed"
    | "handler_failed"
    | "upstream_out"
    | "upstream_in";
  method?: string;
  path?: string;
  clientIp?: string;
  upstream?: string;
  status?: number;
  /** A short technical reason (error name and code), never a stack. */
  reason?: string;
}

export type EdgeLog = (entry: EdgeLogEntry) => void;

/** A technical one-liner for the log: `TypeError: fetch failed (ECONNREFUSED)`. */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const code =
    (cause && typeof cause === "object" && "code" in cause && String(cause.code)) ||
    ("code" in err && String((err as { code?: unknown }).code)) ||
    "";
  return `${err.name}: ${err.message}${code ? ` (${code})` : ""}`;
}
