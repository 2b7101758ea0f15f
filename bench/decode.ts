/**
 * Throughput of the stdout path (UTF-8 bytes in 64 KiB pipe-sized chunks → LineFramer →
 * decodeLine) against bare `JSON.parse` of the same lines, already split into strings, on a
 * realistic mixed stream: every captured fixture line (init, assistant, stream_event, results,
 * control frames…) in turn, with a synthetic 1 MB tool-result line (Bash output or a file read,
 * the text twice as the CLI prints it: `content` and `tool_use_result`) after each pass.
 *
 * Runs are interleaved (A B, B A, …) so that drift (GC, CPU frequency) hits both sides; the
 * medians are compared. Last line: `decode: mb_per_s=<n> json_parse_mb_per_s=<n> ratio=<n>`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { decodeLine } from "../server/shared/claude-protocol/decode-line";
import { LineFramer } from "../server/shared/claude-protocol/line-framer";

const FIXTURES = fileURLToPath(new URL("../server/shared/claude-protocol/fixtures/", import.meta.url));
const TARGET_BYTES = 50 * 1024 * 1024;
/** Size of the tool output text; it appears twice in its line, making ~1 MB lines. */
const TOOL_TEXT_BYTES = 512 * 1024;
const CHUNK_BYTES = 64 * 1024; // what a Node pipe read delivers
const WARMUP_RUNS = 3;
const ROUNDS = 9;

/** Result of one benchmark run. */
export interface DecodeBenchResult {
  mbPerS: number;
  jsonParseMbPerS: number;
  ratio: number;
}

function fixtureStdoutLines(): string[] {
  return readdirSync(FIXTURES)
    .filter((f) => f.endsWith(".ndjson") && !f.startsWith("synthetic"))
    .sort()
    .flatMap((f) => readFileSync(`${FIXTURES}${f}`, "utf8").split("\n"))
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as { dir: string; msg?: unknown })
    .filter((row) => row.dir === "out" && row.msg !== undefined)
    .map((row) => JSON.stringify(row.msg));
}

/** Deterministic tool output: code and log text with quotes, tabs, newlines and some non-ASCII. */
function toolOutput(seed: number, bytes: number): string {
  let x = seed * 2654435761;
  const next = () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x;
  };
  const words = [
    "const",
    "value",
    "return",
    "await",
    "error",
    "config",
    "session",
    "approval",
    "résumé",
    "naïve",
    "日本語",
    "—",
  ];
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const w = words[next() % words.length];
    const line =
      next() % 3 === 0
        ? `\tif (${w}_${i} !== "${w}") { throw new Error("unexpected \\"${w}\\" at line ${i}"); }\n`
        : `${i.toString().padStart(6)}  ${w}.${w}(${next() % 1000}, '${w}') // ${w} ✓\n`;
    parts.push(line);
    size += line.length;
  }
  return parts.join("");
}

function bigToolResult(i: number, sessionId: string): string {
  const text = toolOutput(i + 1, TOOL_TEXT_BYTES);
  const id = `toolu_bench_${i}`;
  const content = [{ tool_use_id: id, type: "tool_result", content: text, is_error: false }];
  const toolUseResult =
    i % 2 === 0
      ? { stdout: text, stderr: "", interrupted: false, isImage: false, noOutputExpected: false }
      : {
          type: "text",
          file: {
            filePath: `/srv/ws/src/file-${i}.ts`,
            content: text,
            numLines: 20000,
            startLine: 1,
            totalLines: 20000,
          },
        };
  return JSON.stringify({
    type: "user",
    message: { role: "user", content },
    parent_tool_use_id: null,
    session_id: sessionId,
    uuid: `00000000-0000-4000-8000-${i.toString().padStart(12, "0")}`,
    timestamp: "2026-11-30T01:00:00.000Z",
    tool_use_result: toolUseResult,
    tool_result_meta: [{ id, permission_decision: { decision: "accept", source: "user_temporary" } }],
  });
}

function buildStream(): { lines: string[]; bytes: Uint8Array } {
  const small = fixtureStdoutLines();
  const lines: string[] = [];
  let size = 0;
  let big = 0;
  while (size < TARGET_BYTES) {
    for (const line of small) {
      lines.push(line);
      size += line.length + 1;
    }
    const line = bigToolResult(big++, "bench-session");
    lines.push(line);
    size += line.length + 1;
  }
  const bytes = new TextEncoder().encode(`${lines.join("\n")}\n`);
  return { lines, bytes };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Framer + decoder over byte chunks. Returns the number of messages (kept so nothing is optimised away). */
function runDecoder(chunks: Uint8Array[]): number {
  const framer = new LineFramer();
  let count = 0;
  for (const chunk of chunks) {
    for (const line of framer.push(chunk)) {
      if (typeof line === "string" && decodeLine(line).ok) count++;
    }
  }
  for (const line of framer.end()) if (typeof line === "string" && decodeLine(line).ok) count++;
  return count;
}

/**
 * The least any host must do with the same bytes: split at newlines, turn each line into a
 * string, JSON.parse it. No framer checks, no decoder. Printed for context: the headline ratio
 * compares against JSON.parse of strings that already exist, which skips making the strings.
 */
function runBytesBaseline(chunks: Uint8Array[]): number {
  let count = 0;
  let parts: Buffer[] = [];
  for (const chunk of chunks) {
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    let newline = buf.indexOf(10);
    while (newline !== -1) {
      parts.push(buf.subarray(start, newline));
      const line = parts.length === 1 ? parts[0]!.toString("utf8") : Buffer.concat(parts).toString("utf8");
      if (line.length > 0 && JSON.parse(line) !== null) count++;
      parts = [];
      start = newline + 1;
      newline = buf.indexOf(10, start);
    }
    if (start < buf.length) parts.push(buf.subarray(start));
  }
  return count;
}

function runJsonParse(lines: string[]): number {
  let count = 0;
  for (const line of lines) if (JSON.parse(line) !== null) count++;
  return count;
}

/** Runs the benchmark, prints a few lines (the last one machine-readable) and returns the figures. */
export default async function run(): Promise<DecodeBenchResult> {
  const { lines, bytes } = buildStream();
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += CHUNK_BYTES) chunks.push(bytes.subarray(i, i + CHUNK_BYTES));
  const mb = bytes.length / 1e6;
  const big = lines.filter((l) => l.length > TOOL_TEXT_BYTES);
  const bigMb = big.reduce((sum, l) => sum + l.length, 0) / 1e6;
  console.log(
    `decode: stream ${mb.toFixed(1)} MB in ${chunks.length} chunks of ${CHUNK_BYTES / 1024} KiB: ${lines.length - big.length} fixture lines (${(mb - bigMb).toFixed(1)} MB) and ${big.length} tool-result lines of ~${(bigMb / big.length).toFixed(2)} MB`,
  );

  // Warm both paths up (JIT tiers, inline caches) before timing.
  const expected = runJsonParse(lines);
  for (let i = 0; i < WARMUP_RUNS; i++) {
    if (runDecoder(chunks) !== expected) throw new Error("decoder and JSON.parse disagree on the line count");
    runJsonParse(lines);
  }

  const ours: number[] = [];
  const baseline: number[] = [];
  const fromBytes: number[] = [];
  const timeOurs = () => {
    const start = performance.now();
    runDecoder(chunks);
    ours.push(mb / ((performance.now() - start) / 1000));
  };
  const timeBaseline = () => {
    const start = performance.now();
    runJsonParse(lines);
    baseline.push(mb / ((performance.now() - start) / 1000));
  };
  const timeBytes = () => {
    const start = performance.now();
    runBytesBaseline(chunks);
    fromBytes.push(mb / ((performance.now() - start) / 1000));
  };
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      timeOurs();
      timeBaseline();
      timeBytes();
    } else {
      timeBytes();
      timeBaseline();
      timeOurs();
    }
    // Let a pending GC or timer run between rounds rather than inside one.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  console.log(`decode: framer+decoder MB/s per round: ${ours.map((v) => v.toFixed(0)).join(" ")}`);
  console.log(`decode: JSON.parse     MB/s per round: ${baseline.map((v) => v.toFixed(0)).join(" ")}`);
  const bytesMbPerS = median(fromBytes);
  console.log(
    `decode: bytes->string->JSON.parse (no framer, no decoder) MB/s: ${bytesMbPerS.toFixed(1)}; framer+decoder relative to it: ${(median(ours) / bytesMbPerS).toFixed(3)}`,
  );
  const mbPerS = median(ours);
  const jsonParseMbPerS = median(baseline);
  const ratio = mbPerS / jsonParseMbPerS;
  console.log(
    `decode: mb_per_s=${mbPerS.toFixed(1)} json_parse_mb_per_s=${jsonParseMbPerS.toFixed(1)} ratio=${ratio.toFixed(3)}`,
  );
  return { mbPerS, jsonParseMbPerS, ratio };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
