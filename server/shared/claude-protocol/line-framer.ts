/** Options of {@link LineFramer}. */
export interface LineFramerOptions {
  /**
   * Longest line accepted, in UTF-16 code units of the decoded text (equal to bytes for ASCII;
   * the CLI prints JSON, so nearly all of a line is ASCII). Longer lines are reported as
   * {@link LineTooLongError} and skipped up to the next newline. Default 64 MiB: the CLI
   * accepted 20 MB lines, and a replayed or compacted message can be that large.
   */
  maxLineLength?: number;
}

/** Default {@link LineFramerOptions.maxLineLength}. */
export const DEFAULT_MAX_LINE_LENGTH = 64 * 1024 * 1024;

/**
 * A line longer than the framer's limit. Returned in place of the line (never thrown); the
 * framer drops the rest of that line and carries on with the next one, so memory stays bounded.
 */
export class LineTooLongError extends Error {
  /** Stable code for logs and wire errors. */
  readonly code = "line_too_long" as const;
  /** The configured limit. */
  readonly limit: number;
  /** How much of the line had been seen when it was given up (at least `limit + 1`). */
  readonly seen: number;

  /** Builds the error for a line of at least `seen` units against `limit`. */
  constructor(limit: number, seen: number) {
    super(`Line longer than ${limit} characters (${seen} seen); skipped to the next newline`);
    this.name = "LineTooLongError";
    this.limit = limit;
    this.seen = seen;
  }
}

/** What {@link LineFramer.push} and {@link LineFramer.end} yield: a line, or a skipped oversize line. */
export type FramedLine = string | LineTooLongError;

/**
 * Turns a byte or text stream into complete lines.
 *
 * - Bytes are decoded as UTF-8 in streaming mode, so a character split across chunks is
 *   reassembled; malformed bytes become U+FFFD rather than an exception.
 * - Lines end at `\n`; a `\r` before it is dropped. Blank lines are skipped (the CLI never
 *   prints them, and they carry nothing).
 * - A line over the limit yields one {@link LineTooLongError}, then input is discarded up to
 *   the next newline.
 * - `end()` flushes the decoder and returns the last, unterminated line (a CLI that died
 *   mid-line leaves one; the decoder then reports it as invalid JSON).
 *
 * Mixing string and byte chunks is allowed; a string chunk flushes any incomplete UTF-8
 * sequence first (as U+FFFD).
 */
export class LineFramer {
  private readonly maxLineLength: number;
  private readonly decoder = new TextDecoder("utf-8");
  private hasPendingBytes = false;
  /** Text of the current, unterminated line. */
  private partial = "";
  /** True while discarding the rest of an oversize line. */
  private skipping = false;

  /** Creates a framer; see {@link LineFramerOptions}. */
  constructor(options: LineFramerOptions = {}) {
    const max = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(`maxLineLength must be a positive integer, got ${max}`);
    }
    this.maxLineLength = max;
  }

  /** Feeds one chunk; returns the lines it completed, in order. */
  push(chunk: string | Uint8Array): FramedLine[] {
    let text: string;
    if (typeof chunk === "string") {
      text = this.hasPendingBytes ? this.decoder.decode() + chunk : chunk;
      this.hasPendingBytes = false;
    } else {
      text = this.decoder.decode(chunk, { stream: true });
      this.hasPendingBytes = true;
    }
    const out: FramedLine[] = [];
    this.scan(text, out);
    return out;
  }

  /** Ends the stream; returns the last unterminated line, if any. The framer can be reused. */
  end(): FramedLine[] {
    const out: FramedLine[] = [];
    if (this.hasPendingBytes) {
      this.hasPendingBytes = false;
      this.scan(this.decoder.decode(), out);
    }
    if (!this.skipping && this.partial.length > 0) this.emit(this.partial, out);
    this.partial = "";
    this.skipping = false;
    return out;
  }

  private scan(text: string, out: FramedLine[]): void {
    if (text.length === 0) return;
    let newline = text.indexOf("\n");
    if (newline === -1) {
      this.append(text, out);
      return;
    }
    if (this.skipping) {
      this.skipping = false;
    } else if (this.partial.length > 0) {
      const line = this.partial + text.slice(0, newline);
      this.partial = "";
      this.emit(line, out);
    } else {
      this.emit(text.slice(0, newline), out);
    }
    let start = newline + 1;
    while ((newline = text.indexOf("\n", start)) !== -1) {
      this.emit(text.slice(start, newline), out);
      start = newline + 1;
    }
    if (start < text.length) this.append(start === 0 ? text : text.slice(start), out);
  }

  /** Adds text without a newline to the current line, enforcing the limit. */
  private append(text: string, out: FramedLine[]): void {
    if (this.skipping) return;
    const length = this.partial.length + text.length;
    // One extra unit is tolerated so that a limit-sized line followed by its `\r` is not cut.
    if (length > this.maxLineLength + 1) {
      out.push(new LineTooLongError(this.maxLineLength, length));
      this.partial = "";
      this.skipping = true;
      return;
    }
    // `+=` builds a rope; JSON.parse flattens it once, so a long line costs one copy.
    this.partial += text;
  }

  private emit(line: string, out: FramedLine[]): void {
    const end = line.length > 0 && line.charCodeAt(line.length - 1) === 13 ? line.length - 1 : line.length;
    if (end > this.maxLineLength) {
      out.push(new LineTooLongError(this.maxLineLength, end));
      return;
    }
    if (end === 0 || isBlank(line, end)) return;
    out.push(end === line.length ? line : line.slice(0, end));
  }
}

/** True when the first `end` units are all spaces or tabs (cheap exit on the first other char). */
function isBlank(line: string, end: number): boolean {
  for (let i = 0; i < end; i++) {
    const c = line.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}
