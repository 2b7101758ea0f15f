import { ErrorCode } from "../shared/errors/app-error";

/** The two processes behind the edge, in the words a person reading an error understands. */
export const Upstream = { web: "web", sidecar: "sidecar" } as const;
export type Upstream = (typeof Upstream)[keyof typeof Upstream];

/** A `{error:{code,message}}` JSON response, the shape every Conduit HTTP error has. */
export function jsonErrorResponse(
  status: number,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ error: { code, message } }), {
    status,
    headers: {
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      ...headers,
    },
  });
}

const describe: Record<Upstream, { name: string; detail: string }> = {
  web: {
    name: "web server",
    detail: "The edge proxy is running, but the Next.js web server behind it did not answer.",
  },
  sidecar: {
    name: "session server",
    detail:
      "The edge proxy is running, but the session server (the sidecar that runs Claude Code sessions) did not answer.",
  },
};

/** Whether an error for this request should be JSON rather than a page. */
export function wantsJson(url: URL, accept: string | null): boolean {
  return (
    url.pathname.startsWith("/api/") ||
    url.pathname.startsWith("/socket.io/") ||
    (accept ?? "").includes("application/json")
  );
}

/** The one-line explanation of a 502, for JSON bodies and refused WebSocket upgrades. */
export function unavailableMessage(upstream: Upstream, timedOut: boolean): string {
  const what = timedOut ? "did not answer in time" : "is not answering";
  return `Conduit's ${describe[upstream].name} ${what}. Try again in a few seconds; if it keeps happening, check that the server processes are running and read their logs.`;
}

/**
 * The 502 a person sees when an upstream process is down or too slow: which one, and what
 * to try. Only fixed text — the upstream's error (with its stack or address) goes to the log.
 */
export function unavailableResponse(upstream: Upstream, json: boolean, timedOut: boolean): Response {
  const { name, detail } = describe[upstream];
  const what = timedOut ? `did not answer in time` : `is not answering`;
  const message = unavailableMessage(upstream, timedOut);
  const headers = { "retry-after": "5", "cache-control": "no-store" };
  if (json) return jsonErrorResponse(502, ErrorCode.unavailable, message, headers);
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Conduit's ${name} ${what}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:36rem;margin:15vh auto;padding:0 1rem;color:#222;line-height:1.5}
h1{font-size:1.4rem}p.hint{color:#555}
</style>
</head>
<body>
<h1>Conduit's ${name} ${what}</h1>
<p>${detail}</p>
<p class="hint">Reload this page in a few seconds. If it keeps happening, check that <code>npm start</code> (or your service manager) is still running Conduit, and read the server logs.</p>
</body>
</html>
`;
  return new Response(html, {
    status: 502,
    headers: { "content-type": "text/html; charset=utf-8", ...headers },
  });
}
