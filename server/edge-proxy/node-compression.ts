/**
 * The edge's compressors under Node: zlib, flushed after every chunk the upstream sends, so a
 * streamed page (Next's shell first, Suspense content later) reaches the browser as it comes,
 * as uncompressed. The web-standard `CompressionStream` (Deno's path) cannot flush mid-stream.
 * br at quality 5: near gzip's speed, smaller; quality 11 costs ~10x the CPU for a few percent.
 */
import zlib from "node:zlib";
import type { Coding, CompressorFactory } from "./compression";

function compressorFor(coding: Coding): zlib.Gzip | zlib.BrotliCompress {
  return coding === "br"
    ? zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } })
    : zlib.createGzip({ level: 6 });
}

/** A TransformStream compressing with `coding`, each input chunk flushed through as one output chunk. */
export const nodeCompressor: CompressorFactory = (coding) => {
  const z = compressorFor(coding);
  const flushKind = coding === "br" ? zlib.constants.BROTLI_OPERATION_FLUSH : zlib.constants.Z_SYNC_FLUSH;
  let out: Buffer[] = [];
  z.on("data", (chunk: Buffer) => out.push(chunk));
  const failed = new Promise<never>((_resolve, reject) => z.once("error", reject));
  failed.catch(() => undefined);
  const handOver = (controller: TransformStreamDefaultController<Uint8Array>) => {
    if (out.length === 0) return;
    const joined = Buffer.concat(out);
    out = [];
    controller.enqueue(new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength));
  };
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      const flushed = new Promise<void>((resolve) => {
        z.write(chunk);
        z.flush(flushKind, () => resolve());
      });
      return Promise.race([flushed, failed]).then(() => handOver(controller));
    },
    flush(controller) {
      const ended = new Promise<void>((resolve) => {
        z.once("end", () => resolve());
        z.end();
      });
      return Promise.race([ended, failed]).then(() => handOver(controller));
    },
  });
};

/** Node has both codings. */
export const nodeCodings: readonly Coding[] = ["br", "gzip"];
