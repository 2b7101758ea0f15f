/**
 * Recorded runs of the real CLI (`../shared/transcripts-real/*.jsonl`, from CLI 1.0.x to 2.1.2xx,
 * recorded by other projects) through Conduit's decoder: every line of every recording, framed
 * the way the session runner frames the CLI's stdout, is typed or kept raw — never thrown away
 * silently. A file dropped into the folder is read without code changes. Counts per type and
 * subtype are printed.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { listRecordings, readRecording, recordingsDir } from "@/test/replay-cli/recordings";
import { decodeLine } from "./decode-line";
import { LineFramer, LineTooLongError } from "./line-framer";
import { resultTotalCostUsd, type CliMessage } from "./messages";

const dir = recordingsDir();
const names = listRecordings(dir);
if (names.length === 0) {
  console.warn(`[recordings] SKIPPED: no *.jsonl in ${dir} (the recorded runs of the real CLI are not here)`);
}

/** A count key: type, plus subtype for system/result/control frames; unknowns by their original type. */
function keyOf(message: CliMessage): string {
  switch (message.type) {
    case "system":
    case "result":
      return `${message.type}/${message.subtype}`;
    case "control_request":
      return message.request.subtype === "unknown"
        ? `control_request/unknown(${message.request.originalSubtype})`
        : `control_request/${message.request.subtype}`;
    case "control_response":
      return `control_response/${message.response.subtype}`;
    case "unknown":
      return `kept-unknown(${message.originalType}${message.originalSubtype ? `/${message.originalSubtype}` : ""})`;
    default:
      return message.type;
  }
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function table(counts: Map<string, number>): string {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([key, n]) => `  ${String(n).padStart(5)}  ${key}`)
    .join("\n");
}

// Skipped only where the recordings folder is absent (a checkout without ../shared): a visible warning says so; CI has it.
describe.skipIf(names.length === 0)(`recorded runs of the real CLI (${dir})`, () => {
  const cliCounts = new Map<string, number>();
  const hostCounts = new Map<string, number>();
  let keptRaw = 0;

  it.each(names)("%s: every CLI line is typed or kept raw", (name) => {
    const file = path.join(dir, name);
    const recorded = readRecording(name, dir);
    const cliLines = recorded.filter((line) => !line.out).map((line) => line.raw);
    const hostLines = recorded.filter((line) => line.out);

    // The session runner's path: the whole stdout as bytes through the line framer, then decodeLine.
    const framer = new LineFramer();
    const bytes = readFileSync(file);
    const framed = [...framer.push(bytes.subarray(0, Math.floor(bytes.length / 2))), ...framer.push(bytes.subarray(Math.floor(bytes.length / 2))), ...framer.end()];
    expect(framed.filter((line) => line instanceof LineTooLongError)).toEqual([]);
    // the framer yields every non-blank line, in order (host lines are filtered after framing)
    const framedCli = (framed as string[]).filter((raw) => !recorded.find((line) => line.raw === raw)?.out);
    expect(framedCli).toEqual(cliLines);

    let results = 0;
    for (const raw of framedCli) {
      const decoded = decodeLine(raw);
      // kept raw: the runner logs a line it cannot decode as `cli-bad-line` with these exact bytes
      expect(decoded.raw).toBe(raw);
      if (!decoded.ok) {
        keptRaw++;
        bump(cliCounts, `kept-raw(${decoded.error.code})`);
        continue;
      }
      const message = decoded.message;
      bump(cliCounts, keyOf(message));
      if (message.type === "unknown") {
        // kept whole: the raw tab shows it, later layers can read it
        expect(message.value).toEqual(JSON.parse(raw));
      } else if (message.type === "control_request" && message.request.subtype === "unknown") {
        expect(message.request.value).toEqual((JSON.parse(raw) as { request?: unknown }).request ?? {});
      } else {
        // a typed message is the parsed line itself
        expect(message).toEqual(JSON.parse(raw));
      }
      if (message.type === "result") {
        results++;
        // every turn end is typed (never lost as unknown), and its cost is readable on every CLI version
        expect(typeof message.is_error).toBe("boolean");
        expect(resultTotalCostUsd(message), `${name}: a result without a readable cost`).toBeTypeOf("number");
      }
    }
    // a recording ends with a result: the turn end was typed
    expect(results).toBeGreaterThan(0);

    for (const line of hostLines) {
      const decoded = decodeLine(line.raw);
      expect(decoded.ok, `${name}:${line.line}: host line is JSON`).toBe(true);
      if (decoded.ok) bump(hostCounts, `host ${keyOf(decoded.message)}`);
    }
  });

  it("prints the counts", () => {
    const total = [...cliCounts.values()].reduce((a, b) => a + b, 0);
    console.log(
      `[recordings] ${names.length} recordings, ${total} CLI lines (${keptRaw} kept raw), ` +
        `${[...hostCounts.values()].reduce((a, b) => a + b, 0)} host lines\n${table(cliCounts)}\n${table(hostCounts)}`,
    );
    expect(total).toBeGreaterThan(0);
  });
});
