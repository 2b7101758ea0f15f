/**
 * The recorded runs of the real CLI (`../shared/transcripts-real/*.jsonl`, beside the repository),
 * for the decoder test, the replay browser test and `npm run bench -- replay`. Every `*.jsonl` of
 * the folder is a recording: a file dropped in is picked up without code changes.
 *
 * Lines marked `"_dir":"out"` are what the recording's host wrote to the CLI (its own input), not
 * CLI output.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Where the recordings are: `CONDUIT_RECORDINGS_DIR`, else `<repo>/../shared/transcripts-real`. */
export function recordingsDir(): string {
  return path.resolve(process.env.CONDUIT_RECORDINGS_DIR ?? path.resolve(repoRoot, "../shared/transcripts-real"));
}

/** The recordings' file names, sorted; `[]` when the folder is absent. */
export function listRecordings(dir = recordingsDir()): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort();
}

export interface RecordedLine {
  /** 1-based line number in the file. */
  line: number;
  /** The line as stored (no newline). */
  raw: string;
  /** The host's own input (`"_dir":"out"`), not CLI output. */
  out: boolean;
  /** The parsed object, or undefined when the line is not JSON. */
  value: Record<string, unknown> | undefined;
}

/** Every non-blank line of one recording. */
export function readRecording(name: string, dir = recordingsDir()): RecordedLine[] {
  const text = readFileSync(path.join(dir, name), "utf8");
  const lines: RecordedLine[] = [];
  text.split("\n").forEach((raw, i) => {
    const trimmed = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (trimmed.trim() === "") return;
    let value: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(trimmed);
      value = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
    } catch {
      value = undefined;
    }
    lines.push({ line: i + 1, raw: trimmed, out: value?._dir === "out", value });
  });
  return lines;
}

/** What a replay of a recording must show. */
export interface RecordingExpectations {
  /** Prompts to send: the recorded host's `user` texts (one empty prompt for a `-p` run). */
  prompts: string[];
  /** Results the CLI wrote (turn ends). */
  results: number;
  /** Results with a cost (`total_cost_usd`, or the legacy `total_cost` / `cost_usd`). */
  costedResults: number;
  /** Text of every assistant text block (main thread and subagents); an API error's is shown as an error notice. */
  texts: { text: string; subagent: boolean; apiError: boolean }[];
  /** Every tool call, and whether the recording holds its result. */
  tools: { id: string; name: string; hasResult: boolean; subagent: boolean }[];
}

/** Reads what a replay must show from the recording's CLI lines. */
export function expectationsOf(lines: readonly RecordedLine[]): RecordingExpectations {
  const prompts: string[] = [];
  const texts: RecordingExpectations["texts"] = [];
  const tools = new Map<string, RecordingExpectations["tools"][number]>();
  let results = 0;
  let costedResults = 0;
  for (const { out, value } of lines) {
    if (!value) continue;
    if (out) {
      if (value.type === "user") prompts.push(textOf((value.message as { content?: unknown } | undefined)?.content));
      continue;
    }
    const message = value.message as { content?: unknown } | undefined;
    const subagent = value.parent_tool_use_id != null;
    if (value.type === "assistant" && Array.isArray(message?.content)) {
      const apiError = value.is_api_error_message === true || (typeof value.error === "string" && (message as { model?: unknown }).model === "<synthetic>");
      for (const block of message.content as Record<string, unknown>[]) {
        if (block?.type === "text" && typeof block.text === "string" && block.text.trim() !== "") texts.push({ text: block.text, subagent, apiError });
        if (block?.type === "tool_use" && typeof block.id === "string") {
          tools.set(block.id, { id: block.id, name: String(block.name), hasResult: tools.get(block.id)?.hasResult ?? false, subagent });
        }
      }
    } else if (value.type === "user" && Array.isArray(message?.content)) {
      for (const block of message.content as Record<string, unknown>[]) {
        if (block?.type !== "tool_result" || typeof block.tool_use_id !== "string") continue;
        const tool = tools.get(block.tool_use_id);
        if (tool) tool.hasResult = true;
      }
    } else if (value.type === "result") {
      results++;
      if (legacyOrCurrentCost(value) !== undefined) costedResults++;
    }
  }
  if (prompts.length === 0) prompts.push("");
  return { prompts, results, costedResults, texts, tools: [...tools.values()] };
}

function legacyOrCurrentCost(result: Record<string, unknown>): number | undefined {
  for (const key of ["total_cost_usd", "total_cost", "cost_usd"]) {
    const value = result[key];
    if (typeof value === "number" && Number.isFinite(value)) return value;
  }
  return undefined;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: unknown) => {
      const text = (block as { text?: unknown } | null)?.text;
      return typeof text === "string" ? text : "";
    })
    .join("");
}
