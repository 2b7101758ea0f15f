/**
 * What a session may ask of the upstream through the credential proxy: an allow-list of methods
 * and paths, matched on the request line exactly as it came (never on a "normalised" form).
 *
 * Found by running the pinned CLI (2.1.332) against the scripted model server with the
 * environment every Conduit child gets (`CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`,
 * `DISABLE_TELEMETRY=1`, `DISABLE_AUTOUPDATER=1`) and logging every method and path: turns with
 * text, a Bash tool, a subagent, `set_model`, `get_context_usage` (summary and full), `/compact`
 * and `/context` called only the two routes below, always with `?beta=true`. (Without the
 * nonessential-traffic switch the CLI also sends `HEAD /api/hello`, a connectivity probe; Conduit
 * always sets the switch, so that route is not needed and stays refused.)
 */
import { z } from "zod";

/** A route the proxy relays. */
export type ProxyRoute = "messages" | "count_tokens";

interface AllowedRoute {
  method: "POST";
  path: string;
  route: ProxyRoute;
}

/** Every method and path a session needs, and nothing else. */
export const allowedRoutes: readonly AllowedRoute[] = [
  // The Messages API: every model call of a turn, a subagent, a compaction, a title or the
  // `set_model` probe (streamed SSE, or JSON on the CLI's non-streaming retry). Billed: metered.
  { method: "POST", path: "/v1/messages", route: "messages" },
  // Token counting: `get_context_usage` (the context meter; ~26 calls per reading, up to ~19 in
  // flight) and `/context`. Free of charge, so never metered and never refused for a budget.
  { method: "POST", path: "/v1/messages/count_tokens", route: "count_tokens" },
];

/** The outcome of {@link checkRequest}. */
export type RequestDecision =
  | { allowed: true; route: ProxyRoute; /** The path and query to append to the upstream's prefix. */ pathAndQuery: string }
  | {
      allowed: false;
      status: 400 | 403;
      errorType: "invalid_request_error" | "permission_error";
      /** For the caller (names the method and path); also the log line's reason. */
      message: string;
    };

// A query is passed on as sent; only plain query characters (percent escapes included: they
// cannot leave the query) are accepted, so nothing in it can be read as a path or a fragment.
const queryPattern = /^[A-Za-z0-9._~=&%+,:-]*$/;
// The path of an allowed route is plain ASCII letters, digits, `_` and `/`: anything else
// (`%`, `\`, `.`, spaces, control or non-ASCII characters) is refused as not canonical rather
// than decoded, so no spelling of a path can be "normalised into" an allowed one.
const canonicalPath = /^(\/[A-Za-z0-9_-]+)+$/;

const requestLine = z.object({ method: z.string().min(1), url: z.string().min(1).max(8192) });

/** Whether `method` and `url` (the request line's target, as Node gives it) may be relayed. */
export function checkRequest(method: string | undefined, url: string | undefined): RequestDecision {
  const parsed = requestLine.safeParse({ method, url });
  if (!parsed.success) return malformed(`${method ?? "?"} ${printable(url ?? "")}`, "an empty or oversized request line");
  const target = parsed.data.url;
  const shown = `${parsed.data.method} ${printable(target)}`;
  const at = target.indexOf("?");
  const path = at === -1 ? target : target.slice(0, at);
  const query = at === -1 ? undefined : target.slice(at + 1);
  if (!canonicalPath.test(path)) {
    return malformed(shown, "a path that is not in canonical form (encoded characters, dot segments, empty segments or backslashes)");
  }
  if (query !== undefined && !queryPattern.test(query)) return malformed(shown, "a query with characters a query does not need");
  const allowed = allowedRoutes.find((r) => r.path === path && r.method === parsed.data.method);
  if (allowed === undefined) {
    return {
      allowed: false,
      status: 403,
      errorType: "permission_error",
      message: `${shown} is not allowed through Conduit's credential proxy: a session may only call ${allowedRoutes.map((r) => `${r.method} ${r.path}`).join(" and ")}.`,
    };
  }
  return { allowed: true, route: allowed.route, pathAndQuery: target };
}

function malformed(shown: string, what: string): RequestDecision {
  return {
    allowed: false,
    status: 400,
    errorType: "invalid_request_error",
    message: `${shown} was refused by Conduit's credential proxy: ${what}.`,
  };
}

/** The target for a message and a log line: control characters escaped, long ones cut. */
function printable(value: string): string {
  const cut = value.length > 200 ? `${value.slice(0, 200)}…` : value;
  return JSON.stringify(cut).slice(1, -1);
}
