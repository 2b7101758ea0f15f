// Web-standard only (CompressionStream, Headers, Response): Node and Deno run it unchanged.

/** A content coding the edge can produce, by its HTTP token. */
export type Coding = "br" | "gzip";

/** HTTP token → the `CompressionStream` format name that produces it (Deno calls brotli "brotli"). */
const FORMAT_CANDIDATES: Record<Coding, readonly string[]> = { br: ["brotli", "br"], gzip: ["gzip"] };

/** Makes the compressor of one response body. */
export type CompressorFactory = (coding: Coding) => TransformStream<Uint8Array, Uint8Array>;

/** What the edge compresses with: the codings it offers (best first) and how it makes a compressor. */
export interface CompressionSetup {
  codings: readonly Coding[];
  compressor: CompressorFactory;
}

/**
 * The runtime's `CompressionStream`, where it has the format (Deno: br and gzip; Node 20: gzip).
 * It cannot flush mid-stream: a streamed page arrives when it ends (Node uses node-compression.ts).
 */
export function webCompression(): CompressionSetup {
  const formats = availableCodings();
  return {
    codings: [...formats.keys()],
    compressor: (coding) =>
      new CompressionStream(formats.get(coding) as CompressionFormat) as unknown as TransformStream<Uint8Array, Uint8Array>,
  };
}

/** Below this many bytes the headers cost more than compression saves. */
export const MIN_COMPRESS_BYTES = 1024;

/** Which codings this runtime's `CompressionStream` can produce, best first (br, then gzip). */
export function availableCodings(): Map<Coding, string> {
  const found = new Map<Coding, string>();
  if (typeof CompressionStream !== "function") return found;
  for (const coding of ["br", "gzip"] as const) {
    for (const format of FORMAT_CANDIDATES[coding]) {
      try {
        new CompressionStream(format as CompressionFormat);
        found.set(coding, format);
        break;
      } catch {
        // this runtime does not know the format
      }
    }
  }
  return found;
}

/**
 * The coding to answer with for an `Accept-Encoding` header, or undefined for identity.
 * Honours q-values (`q=0` refuses), `*`, and prefers br over gzip at equal weight.
 */
export function negotiateCoding(acceptEncoding: string | null, available: readonly Coding[]): Coding | undefined {
  if (!acceptEncoding || available.length === 0) return undefined;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(",")) {
    const [rawName, ...params] = part.split(";");
    const name = rawName?.trim().toLowerCase();
    if (!name) continue;
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split("=").map((s) => s.trim());
      if (key?.toLowerCase() === "q") q = Number.isFinite(Number(value)) ? Number(value) : 0;
    }
    weights.set(name === "x-gzip" ? "gzip" : name, q);
  }
  let best: Coding | undefined;
  let bestQ = 0;
  for (const coding of available) {
    const q = weights.get(coding) ?? weights.get("*") ?? 0;
    if (q > bestQ) {
      best = coding;
      bestQ = q;
    }
  }
  return best;
}

const COMPRESSIBLE_TYPES = new Set([
  "application/javascript",
  "application/ecmascript",
  "application/json",
  "application/manifest+json",
  "application/xml",
  "application/xhtml+xml",
  "application/wasm",
  "image/svg+xml",
  "image/x-icon",
  "font/ttf",
  "font/otf",
]);

/** JS, CSS, HTML, JSON, SVG and other text; never an event stream (it must flush per event). */
export function isCompressibleType(contentType: string | null): boolean {
  const type = contentType?.split(";")[0]?.trim().toLowerCase();
  if (!type) return false;
  if (type === "text/event-stream") return false;
  if (type.startsWith("text/")) return true;
  if (type.endsWith("+json") || type.endsWith("+xml")) return true;
  return COMPRESSIBLE_TYPES.has(type);
}

/** Adds `Accept-Encoding` to `Vary` once, keeping what the upstream listed. */
export function varyOnAcceptEncoding(headers: Headers): void {
  const vary = headers.get("vary");
  if (!vary) return headers.set("vary", "Accept-Encoding");
  const names = vary.split(",").map((v) => v.trim().toLowerCase());
  if (names.includes("*") || names.includes("accept-encoding")) return;
  headers.set("vary", `${vary}, Accept-Encoding`);
}

export interface CompressionInput {
  method: string;
  /** The browser's request headers (Accept-Encoding, Range). */
  requestHeaders: Headers;
  /** The upstream's answer, headers as the edge will send them (before hop-by-hop removal is fine). */
  status: number;
  headers: Headers;
  /** The upstream said it encoded the body itself (its `Content-Encoding` was not identity). */
  upstreamEncoded: boolean;
  /** Socket.IO traffic: long-polls are streams the edge leaves alone. */
  stream: boolean;
}

/**
 * Whether the body may be compressed at all, whatever the browser accepts: not for HEAD, ranges,
 * bodiless statuses, already-encoded or `no-transform` bodies, event streams and Socket.IO,
 * non-text types, and bodies known to be tiny.
 */
export function mayCompress(input: CompressionInput): boolean {
  const { headers, status } = input;
  if (input.stream || input.upstreamEncoded) return false;
  if (input.method === "HEAD" || input.requestHeaders.has("range")) return false;
  if (status < 200 || status === 204 || status === 206 || status === 304) return false;
  if (headers.has("content-range")) return false;
  if (/(^|,)\s*no-transform\s*(,|$)/i.test(headers.get("cache-control") ?? "")) return false;
  if (!isCompressibleType(headers.get("content-type"))) return false;
  const length = Number(headers.get("content-length") ?? NaN);
  if (Number.isFinite(length) && length < MIN_COMPRESS_BYTES) return false;
  return true;
}

/**
 * Compresses `body` with the coding the browser accepts, when the response allows it. Sets
 * `Content-Encoding` and `Vary: Accept-Encoding`, drops `Content-Length` (the body is now
 * streamed in chunks) and weakens a strong ETag (the bytes differ from identity's). Compressible
 * responses the browser gets uncompressed still say `Vary: Accept-Encoding`, so caches keep both.
 */
export function compressBody(
  input: CompressionInput,
  body: ReadableStream<Uint8Array> | null,
  setup: CompressionSetup,
): ReadableStream<Uint8Array> | null {
  if (!body || !mayCompress(input)) return body;
  const { headers } = input;
  varyOnAcceptEncoding(headers);
  const coding = negotiateCoding(input.requestHeaders.get("accept-encoding"), setup.codings);
  if (!coding) return body;
  headers.set("content-encoding", coding);
  headers.delete("content-length");
  const etag = headers.get("etag");
  if (etag && !etag.startsWith("W/")) headers.set("etag", `W/${etag}`);
  return body.pipeThrough(setup.compressor(coding));
}
