import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type FramedLine, LineFramer, LineTooLongError } from "./line-framer";

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}.ndjson`, import.meta.url));

/** stdout lines of a fixture, as the CLI printed them. */
function stdoutLines(name: string): string[] {
  return readFileSync(fixture(name), "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as { dir: string; msg?: unknown })
    .filter((row) => row.dir === "out" && row.msg !== undefined)
    .map((row) => JSON.stringify(row.msg));
}

const encoder = new TextEncoder();

function frameAll(chunks: Array<string | Uint8Array>, framer = new LineFramer()): FramedLine[] {
  const out: FramedLine[] = [];
  for (const chunk of chunks) out.push(...framer.push(chunk));
  out.push(...framer.end());
  return out;
}

describe("LineFramer", () => {
  it("splits on \\n, drops the \\r of CRLF, skips blank lines", () => {
    expect(frameAll(["a\nb\r\n\n  \r\nc\n"])).toEqual(["a", "b", "c"]);
  });

  it("joins a line split across chunks and returns the unterminated tail on end()", () => {
    const framer = new LineFramer();
    expect(framer.push('{"a":')).toEqual([]);
    expect(framer.push('1}\n{"b"')).toEqual(['{"a":1}']);
    expect(framer.push(":2}")).toEqual([]);
    expect(framer.end()).toEqual(['{"b":2}']);
    expect(framer.end()).toEqual([]);
  });

  it("handles a CR at the end of one chunk and the LF at the start of the next", () => {
    expect(frameAll(["one\r", "\ntwo\r", "\n"])).toEqual(["one", "two"]);
  });

  it("decodes multi-byte UTF-8 split inside a character", () => {
    const bytes = encoder.encode("é🎉\n");
    for (let i = 0; i <= bytes.length; i++) {
      expect(frameAll([bytes.subarray(0, i), bytes.subarray(i)])).toEqual(["é🎉"]);
    }
  });

  it("turns malformed UTF-8 into U+FFFD instead of throwing", () => {
    expect(frameAll([new Uint8Array([0x61, 0xff, 0x62, 0x0a])])).toEqual(["a\uFFFDb"]);
    // A truncated sequence at end of stream.
    expect(frameAll([new Uint8Array([0x61, 0xe6, 0x97])])).toEqual(["a\uFFFD"]);
  });

  it("accepts string and byte chunks mixed", () => {
    expect(frameAll(["ab", encoder.encode("c\nd"), "e\n"])).toEqual(["abc", "de"]);
  });

  it("reports an oversize line inside one chunk and keeps the neighbours", () => {
    const out = frameAll([`ok\n${"x".repeat(11)}\nnext\n`], new LineFramer({ maxLineBytes: 10 }));
    expect(out[0]).toBe("ok");
    expect(out[1]).toBeInstanceOf(LineTooLongError);
    expect(out[1]).toMatchObject({ code: "line_too_long", limit: 10, seen: 11 });
    expect(out[2]).toBe("next");
    expect(out).toHaveLength(3);
  });

  it("gives up on an oversize line early, discards it without buffering, and recovers at the next newline", () => {
    const framer = new LineFramer({ maxLineBytes: 10 });
    expect(framer.push("ok\n012345")).toEqual(["ok"]);
    const second = framer.push("6789abcdef");
    expect(second).toHaveLength(1);
    expect(second[0]).toBeInstanceOf(LineTooLongError);
    // Still inside the oversize line: nothing is kept, nothing is reported twice.
    expect(framer.push("x".repeat(1000))).toEqual([]);
    expect(framer.push("tail\nafter\n")).toEqual(["after"]);
    expect(framer.end()).toEqual([]);
  });

  it("accepts a line of exactly the limit, with or without CR", () => {
    const framer = new LineFramer({ maxLineBytes: 4 });
    expect(frameAll(["abcd\n", "ab", "cd\r", "\n"], framer)).toEqual(["abcd", "abcd"]);
  });

  it("drops the tail of an oversize unterminated line at end()", () => {
    const framer = new LineFramer({ maxLineBytes: 3 });
    const out = [...framer.push("abcdef"), ...framer.end()];
    expect(out).toHaveLength(1);
    expect(out[0]).toBeInstanceOf(LineTooLongError);
  });

  it("counts the limit in UTF-8 bytes", () => {
    // "ééé" is 3 characters but 6 bytes.
    const out = frameAll(["ééé\néé\n"], new LineFramer({ maxLineBytes: 5 }));
    expect(out[0]).toBeInstanceOf(LineTooLongError);
    expect(out[0]).toMatchObject({ seen: 6 });
    expect(out[1]).toBe("éé");
  });

  it("applies the limit to the unterminated line returned by end()", () => {
    const framer = new LineFramer({ maxLineBytes: 5 });
    expect(framer.push("abcdef")).toEqual([]);
    const out = framer.end();
    expect(out).toHaveLength(1);
    expect(out[0]).toBeInstanceOf(LineTooLongError);
    expect(frameAll(["abcde\r"], new LineFramer({ maxLineBytes: 5 }))).toEqual(["abcde"]);
  });

  it("keeps a CR that is not part of the line ending", () => {
    expect(frameAll(["a\r", "b\r\n", "c\rd\n"])).toEqual(["a\rb", "c\rd"]);
  });

  it("recovers after an oversize line that ended exactly at a chunk boundary", () => {
    const framer = new LineFramer({ maxLineBytes: 3 });
    const out = [...framer.push("abcdefgh"), ...framer.push("\n"), ...framer.push("ok\n")];
    expect(out[0]).toBeInstanceOf(LineTooLongError);
    expect(out.slice(1)).toEqual(["ok"]);
  });

  it("rejects a nonsensical limit", () => {
    expect(() => new LineFramer({ maxLineBytes: 0 })).toThrow(RangeError);
  });

  it("yields identical lines when a fixture stream is split at every byte boundary", () => {
    const lines = [
      ...stdoutLines("queue-while-running").slice(0, 6),
      // Non-ASCII in the stream, including a 4-byte character and a line separator.
      JSON.stringify({
        type: "assistant",
        message: { content: [{ type: "text", text: "héllo — 日本語 🎉 \u2028 ok" }] },
      }),
    ];
    // One CRLF line, as a Windows-ish pipe might deliver it.
    const stream = `${lines.slice(0, -1).join("\n")}\r\n${lines[lines.length - 1]}\n`;
    const bytes = encoder.encode(stream);
    expect(frameAll([bytes])).toEqual(lines);
    for (let i = 0; i <= bytes.length; i++) {
      const out = frameAll([bytes.subarray(0, i), bytes.subarray(i)]);
      if (out.length !== lines.length || out.some((line, k) => line !== lines[k])) {
        throw new Error(`split at byte ${i} changed the lines`);
      }
    }
  });

  it("yields identical lines for three-way splits and one-byte chunks", () => {
    const lines = stdoutLines("partial-messages").slice(0, 8);
    const bytes = encoder.encode(`${lines.join("\n")}\n`);
    const step = Math.max(1, Math.floor(bytes.length / 60));
    for (let i = 0; i <= bytes.length; i += step) {
      for (let j = i; j <= bytes.length; j += step) {
        const out = frameAll([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]);
        if (out.join("\n") !== lines.join("\n")) throw new Error(`split at ${i}/${j} changed the lines`);
      }
    }
    const oneByte = Array.from({ length: bytes.length }, (_, k) => bytes.subarray(k, k + 1));
    expect(frameAll(oneByte)).toEqual(lines);
  });
});
