import zlib, { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { availableCodings, negotiateCoding } from "./compression";
import { createEdgeHandler } from "./handler";
import { nodeCodings, nodeCompressor } from "./node-compression";

const PUBLIC = "http://localhost:3000";
const BIG_JS = `export const chunk = ${JSON.stringify("conduit ".repeat(4000))};\n`;

function edgeAnswering(respond: () => Response, compression?: Parameters<typeof createEdgeHandler>[0]["compression"]) {
  const sent: Headers[] = [];
  const handler = createEdgeHandler({
    nextOrigin: "http://127.0.0.1:3001",
    sidecarOrigin: "http://127.0.0.1:3002",
    publicOrigin: PUBLIC,
    rateLimit: false,
    ...(compression !== undefined ? { compression } : {}),
    fetch: (async (_input: RequestInfo | URL, init: RequestInit = {}) => {
      sent.push(new Headers(init.headers));
      return respond();
    }) as typeof fetch,
  });
  return { handler, sent };
}

const js = (body = BIG_JS, headers: Record<string, string> = {}) => () =>
  new Response(body, {
    headers: { "content-type": "application/javascript; charset=utf-8", "content-length": String(Buffer.byteLength(body)), ...headers },
  });

const get = (path: string, headers: Record<string, string> = { "accept-encoding": "gzip, deflate, br" }) =>
  new Request(`${PUBLIC}${path}`, { headers });

async function bytes(res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer());
}

describe("negotiateCoding", () => {
  it("prefers br, honours q-values, * and refusals", () => {
    expect(negotiateCoding("gzip, deflate, br", ["br", "gzip"])).toBe("br");
    expect(negotiateCoding("gzip, deflate, br", ["gzip"])).toBe("gzip");
    expect(negotiateCoding("br;q=0.5, gzip", ["br", "gzip"])).toBe("gzip");
    expect(negotiateCoding("br;q=0, gzip;q=0", ["br", "gzip"])).toBeUndefined();
    expect(negotiateCoding("*", ["gzip"])).toBe("gzip");
    expect(negotiateCoding("*, gzip;q=0", ["gzip"])).toBeUndefined();
    expect(negotiateCoding("identity", ["br", "gzip"])).toBeUndefined();
    expect(negotiateCoding(null, ["gzip"])).toBeUndefined();
    expect(negotiateCoding("x-gzip", ["gzip"])).toBe("gzip");
  });

  it("finds gzip in every runtime the edge supports", () => {
    expect(availableCodings().get("gzip")).toBe("gzip");
  });
});

describe("the edge compresses", () => {
  it("gzips a JavaScript asset for a browser that accepts it, and asks the upstream for identity", async () => {
    const { handler, sent } = edgeAnswering(js(BIG_JS, { etag: '"abc"', vary: "RSC" }));
    const res = await handler(get("/_next/static/chunks/app.js", { "accept-encoding": "gzip" }));
    expect(sent[0]!.get("accept-encoding")).toBe("identity");
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(res.headers.get("vary")).toBe("RSC, Accept-Encoding");
    expect(res.headers.get("etag")).toBe('W/"abc"');
    expect(res.headers.has("content-length")).toBe(false);
    const body = await bytes(res);
    expect(body.length).toBeLessThan(Buffer.byteLength(BIG_JS) / 10);
    expect(gunzipSync(body).toString()).toBe(BIG_JS);
  });

  it("uses br where it is offered (Node's zlib) and the browser prefers it", async () => {
    const { handler } = edgeAnswering(js(), { codings: nodeCodings, compressor: nodeCompressor });
    const res = await handler(get("/_next/static/chunks/app.js"));
    expect(res.headers.get("content-encoding")).toBe("br");
    expect(brotliDecompressSync(await bytes(res)).toString()).toBe(BIG_JS);
    const gz = await edgeAnswering(js(), { codings: nodeCodings, compressor: nodeCompressor }).handler(get("/a.js", { "accept-encoding": "gzip" }));
    expect(gunzipSync(await bytes(gz)).toString()).toBe(BIG_JS);
  });

  it("passes each chunk of a streamed page on as it comes (Node's compressor flushes)", async () => {
    for (const coding of nodeCodings) {
      let sendSecond: () => void = () => {};
      const second = new Promise<void>((r) => (sendSecond = r));
      const source = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode(`<html><body>${"shell ".repeat(300)}`));
          await second;
          controller.enqueue(new TextEncoder().encode("<p>late</p></body></html>"));
          controller.close();
        },
      });
      const reader = source.pipeThrough(nodeCompressor(coding)).getReader();
      // the shell decodes on its own, before the rest exists
      const first = Buffer.from((await reader.read()).value!);
      const partial =
        coding === "br"
          ? zlib.brotliDecompressSync(first, { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH })
          : zlib.gunzipSync(first, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
      expect(partial.toString(), coding).toContain("shell shell");
      sendSecond();
      const rest: Buffer[] = [first];
      for (let r = await reader.read(); !r.done; r = await reader.read()) rest.push(Buffer.from(r.value));
      const all = coding === "br" ? brotliDecompressSync(Buffer.concat(rest)) : gunzipSync(Buffer.concat(rest));
      expect(all.toString()).toMatch(/<p>late<\/p><\/body><\/html>$/);
    }
  });

  it.each([
    ["text/css", "body { color: red } ".repeat(200)],
    ["text/html; charset=utf-8", `<p>${"hello ".repeat(500)}</p>`],
    ["application/json", JSON.stringify({ items: Array.from({ length: 300 }, (_, i) => ({ i })) })],
    ["image/svg+xml", `<svg>${"<g/>".repeat(500)}</svg>`],
  ])("compresses %s", async (type, body) => {
    const { handler } = edgeAnswering(() => new Response(body, { headers: { "content-type": type } }));
    const res = await handler(get("/x"));
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(gunzipSync(await bytes(res)).toString()).toBe(body);
  });

  it("sends identity when the browser does not accept gzip, still saying Vary", async () => {
    const { handler } = edgeAnswering(js());
    const res = await handler(get("/app.js", { "accept-encoding": "identity" }));
    expect(res.headers.has("content-encoding")).toBe(false);
    expect(res.headers.get("vary")).toBe("Accept-Encoding");
    expect(await res.text()).toBe(BIG_JS);
  });

  it("leaves alone: images, tiny bodies, event streams, ranges, HEAD, no-transform, 304 and socket traffic", async () => {
    const cases: [() => Response, Request][] = [
      [() => new Response(new Uint8Array(5000), { headers: { "content-type": "image/png" } }), get("/a.png")],
      [js("tiny();"), get("/tiny.js")],
      [() => new Response("data: x\n\n".repeat(500), { headers: { "content-type": "text/event-stream" } }), get("/api/events")],
      [js(), get("/app.js", { "accept-encoding": "gzip", range: "bytes=0-99" })],
      [js(BIG_JS, { "cache-control": "public, no-transform" }), get("/app.js")],
      [() => new Response(null, { status: 304, headers: { "content-type": "application/javascript" } }), get("/app.js")],
      [() => new Response("x".repeat(5000), { headers: { "content-type": "text/plain; charset=UTF-8" } }), get("/socket.io/?EIO=4&transport=polling", { "accept-encoding": "gzip", cookie: "next-auth.session-token=a" })],
    ];
    for (const [respond, request] of cases) {
      const { handler } = edgeAnswering(respond);
      const res = await handler(request);
      expect(res.headers.has("content-encoding"), request.url).toBe(false);
    }
    const head = edgeAnswering(js());
    const res = await head.handler(new Request(`${PUBLIC}/app.js`, { method: "HEAD", headers: { "accept-encoding": "gzip" } }));
    expect(res.headers.has("content-encoding")).toBe(false);
  });

  it("never encodes twice what an upstream encoded anyway", async () => {
    const { handler } = edgeAnswering(js(BIG_JS, { "content-encoding": "br" }));
    const res = await handler(get("/app.js"));
    expect(res.headers.has("content-encoding")).toBe(false);
  });

  it("can be turned off", async () => {
    const { handler } = edgeAnswering(js(), false);
    const res = await handler(get("/app.js"));
    expect(res.headers.has("content-encoding")).toBe(false);
    expect(await res.text()).toBe(BIG_JS);
  });
});
