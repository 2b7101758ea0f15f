/** Options of {@link LineFramer}. */
export interface LineFramerOptions {
  /**
   * Longest line accepted, in UTF-8 bytes (without the newline). Longer lines are reported
   * as {@link LineTooLongError} and skipped up to the next newline, so memory stays bounded.
   * Default 64 MiB: the CLI accepted 20 MB lines, and a replayed or compacted message can be
   * that large.
   */
  maxLineBytes?: number;
}

/** Default {@link LineFramerOptions.maxLineBytes}. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

/**
 * A line longer than the framer's limit. Returned in place of the line (never thrown); the
 * framer drops the rest of that line and carries on with the next one.
 */
export class LineTooLongError extends Error {
  /** Stable code for logs and wire errors. */
  readonly code = "line_too_long" as const;
  /** The configured limit, in bytes. */
  readonly limit: number;
  /** How many bytes of the line had been seen when it was given up (more than `limit`). */
  readonly seen: number;

  /** Builds the error for a line of at least `seen` bytes against `limit`. */
  constructor(limit: number, seen: number) {
    super(`Line longer than ${limit} bytes (${seen} seen); skipped to the next newline`);
    this.name = "LineTooLongError";
    this.limit = limit;
    this.seen = seen;
  }
}

/** What {@link LineFramer.push} and {@link LineFramer.end} yield: a line, or a skipped oversize line. */
export type FramedLine = string | LineTooLongError;

const LF = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;

/**
 * Turns a byte stream (CLI stdout) into complete lines.
 *
 * - Lines are cut at the `\n` byte, which never occurs inside a multi-byte UTF-8 sequence, so
 *   each line's bytes are decoded as a whole and a character split across chunks comes out
 *   intact. Malformed bytes become U+FFFD rather than an exception.
 * - A `\r` before the `\n` is dropped. Blank lines are skipped (the CLI never prints them).
 * - A line over the limit yields one {@link LineTooLongError}, then its bytes are discarded
 *   up to the next newline.
 * - `end()` returns the last, unterminated line (a CLI that died mid-line leaves one; the
 *   decoder then reports it as invalid JSON).
 *
 * Why bytes rather than decoding each chunk to text first: a line that sits inside one chunk
 * is decoded on its own, so an ASCII line stays a one-byte string even when its chunk holds
 * non-ASCII text elsewhere (JSON.parse is faster on those), and no chunk-sized string is made
 * only to be sliced. String chunks are accepted too and encoded first (tests, replays).
 */
export class LineFramer {
  private readonly maxLineBytes: number;
  /** Decodes lines that lie inside one chunk. */
  private readonly lineDecoder = new TextDecoder("utf-8");
  /** Decodes the pieces of a line that spans chunks; its stream mode carries split characters. */
  private readonly spanDecoder = new TextDecoder("utf-8");
  private readonly encoder = new TextEncoder();
  /** Text of the current, unterminated line (built as a rope; JSON.parse flattens it once). */
  private partial = "";
  /** UTF-8 bytes in the current, unterminated line. */
  private partialBytes = 0;
  /** The unterminated line has only spaces, tabs and CRs so far. */
  private partialBlank = true;
  /** The last byte of the unterminated line was a CR. */
  private partialEndsWithCr = false;
  /** True while discarding the rest of an oversize line. */
  private skipping = false;

  /** Creates a framer; see {@link LineFramerOptions}. */
  constructor(options: LineFramerOptions = {}) {
    const max = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(`maxLineBytes must be a positive integer, got ${max}`);
    }
    this.maxLineBytes = max;
  }

  /** Feeds one chunk; returns the lines it completed, in order. */
  push(chunk: string | Uint8Array): FramedLine[] {
    const bytes = typeof chunk === "string" ? this.encoder.encode(chunk) : chunk;
    const out: FramedLine[] = [];
    const length = bytes.length;
    let start = 0;
    let newline = bytes.indexOf(LF);
    if (newline !== -1 && (this.partialBytes > 0 || this.skipping)) {
      this.finishPartial(bytes, newline, out);
      start = newline + 1;
      newline = start < length ? bytes.indexOf(LF, start) : -1;
    }
    while (newline !== -1) {
      this.emitBytes(bytes, start, newline, out);
      start = newline + 1;
      newline = start < length ? bytes.indexOf(LF, start) : -1;
    }
    if (start < length) this.appendPartial(bytes, start, length, out);
    return out;
  }

  /** Ends the stream; returns the last unterminated line, if any. The framer can be reused. */
  end(): FramedLine[] {
    const out: FramedLine[] = [];
    if (this.partialBytes > 0 && !this.skipping) {
      const total = this.partialBytes - (this.partialEndsWithCr ? 1 : 0);
      if (total > this.maxLineBytes) {
        out.push(new LineTooLongError(this.maxLineBytes, total));
      } else if (!this.partialBlank) {
        const line = this.partial + this.spanDecoder.decode();
        out.push(this.partialEndsWithCr ? line.slice(0, -1) : line);
      }
    }
    this.reset();
    return out;
  }

  /** Completes the pending line with `bytes[0, newline)`. */
  private finishPartial(bytes: Uint8Array, newline: number, out: FramedLine[]): void {
    if (this.skipping) {
      this.reset();
      return;
    }
    let end = newline;
    let endsWithCr = this.partialEndsWithCr && newline === 0;
    if (end > 0 && bytes[end - 1] === CR) {
      end--;
      endsWithCr = false;
    }
    const total = this.partialBytes + end - (endsWithCr ? 1 : 0);
    const blank = this.partialBlank && isBlank(bytes, 0, end);
    if (total > this.maxLineBytes) {
      out.push(new LineTooLongError(this.maxLineBytes, total));
    } else if (!blank) {
      const line = this.partial + this.spanDecoder.decode(bytes.subarray(0, end));
      // A CR that ended the previous chunk belongs to the line ending, not the text.
      out.push(endsWithCr ? line.slice(0, -1) : line);
    } else {
      this.spanDecoder.decode();
    }
    this.reset();
  }

  /** Emits `bytes[start, newline)` as a line, dropping a final CR. */
  private emitBytes(bytes: Uint8Array, start: number, newline: number, out: FramedLine[]): void {
    let end = newline;
    if (end > start && bytes[end - 1] === CR) end--;
    if (end - start > this.maxLineBytes) {
      out.push(new LineTooLongError(this.maxLineBytes, end - start));
      return;
    }
    if (end === start || isBlank(bytes, start, end)) return;
    out.push(this.lineDecoder.decode(bytes.subarray(start, end)));
  }

  /** Adds `bytes[start, end)` (no newline in it) to the pending line, enforcing the limit. */
  private appendPartial(bytes: Uint8Array, start: number, end: number, out: FramedLine[]): void {
    if (this.skipping) return;
    const total = this.partialBytes + end - start;
    // One extra byte is tolerated: it may be the CR of a limit-sized line.
    if (total > this.maxLineBytes + 1) {
      this.reset();
      this.skipping = true;
      out.push(new LineTooLongError(this.maxLineBytes, total));
      return;
    }
    this.partial += this.spanDecoder.decode(bytes.subarray(start, end), { stream: true });
    this.partialBytes = total;
    this.partialBlank = this.partialBlank && isBlank(bytes, start, end);
    this.partialEndsWithCr = bytes[end - 1] === CR;
  }

  private reset(): void {
    if (this.partialBytes > 0) this.spanDecoder.decode();
    this.partial = "";
    this.partialBytes = 0;
    this.partialBlank = true;
    this.partialEndsWithCr = false;
    this.skipping = false;
  }
}

/** True when `bytes[start, end)` holds only spaces, tabs and CRs (exits on the first `{`). */
function isBlank(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = bytes[i];
    if (c !== SPACE && c !== TAB && c !== CR) return false;
  }
  return true;
}
