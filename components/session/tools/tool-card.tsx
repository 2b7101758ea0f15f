"use client";

import { useId, useState } from "react";
import type { ApprovalView, ToolResultView } from "../conversation";
import { planHeadline } from "@/components/approval/plan-display";
import { relativePath } from "../format";
import { FileToolBody, fileToolNames } from "./file-tools";
import { SearchToolBody } from "./search-tools";
import { isSubagentTool, parseTodos, type ToolBodyProps } from "./tool-data";
import { SubagentStream } from "./subagent";
import { TodoList } from "./todo-list";
import { WebToolBody } from "./web-tools";

type Json = Record<string, unknown>;

export interface ToolCardProps {
  name: string;
  input: unknown;
  result?: ToolResultView;
  approval?: ApprovalView;
  subagent: boolean;
  /** The workspace directory: paths inside it are shown relative to it. */
  rootPath?: string;
  /** Loads a trimmed result whole (`session:fetch-event`). */
  onLoadFull?: (seq: number) => void;
  /** The tool_use id: a subagent's items nest under it. */
  id?: string;
  /** The CLI's task for this call (subagents, background commands). */
  task?: { id: string; status: string; backgrounded: boolean };
}

function asObject(value: unknown): Json {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {};
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** One line saying what the call does: the file, the command, the pattern… */
export function toolSummary(name: string, input: unknown, rootPath?: string): string {
  const i = asObject(input);
  const file = str(i.file_path) ?? str(i.notebook_path);
  const pick =
    (file !== undefined ? relativePath(file, rootPath) : undefined) ??
    str(i.command) ??
    str(i.pattern) ??
    str(i.url) ??
    str(i.query) ??
    str(i.description) ??
    str(i.prompt);
  if (pick) return pick.split("\n")[0]!.slice(0, 160);
  if (name === "AskUserQuestion" && Array.isArray(i.questions)) return str(asObject(i.questions[0]).question) ?? "";
  if (name === "ExitPlanMode") {
    const headline = planHeadline(str(i.plan));
    return headline ? `Plan ready for review: ${headline}` : "Plan ready for review";
  }
  return "";
}

const resultPreviewLines = 40;

/** A tool call as a collapsible card: what was asked, whether it ran, what came back. */
export function ToolCard({ name, input, result, approval, subagent, rootPath, onLoadFull, id, task }: ToolCardProps) {
  const state = approval ? "awaiting-approval" : !result ? "running" : result.isError ? "error" : "done";
  const family = toolFamily(name);
  // A checklist is what a reader wants to see: open from the start (diffs open on a click).
  const [open, setOpen] = useState(state === "error" || family === "todo");
  const [showAll, setShowAll] = useState(false);
  const bodyId = useId();
  const summary = toolSummary(name, input, rootPath);
  const resultLines = result?.text.split("\n") ?? [];
  const longResult = resultLines.length > resultPreviewLines;
  const shownResult = longResult && !showAll ? resultLines.slice(0, resultPreviewLines).join("\n") : result?.text;

  return (
    <div
      data-testid="tool-card"
      data-tool={name}
      data-state={state}
      className={`overflow-hidden rounded-md border text-sm ${
        state === "error"
          ? "border-red-200 dark:border-red-900"
          : state === "awaiting-approval"
            ? "border-amber-300 dark:border-amber-800"
            : "border-zinc-200 dark:border-zinc-800"
      } bg-white dark:bg-zinc-900`}
    >
      <button
        type="button"
        aria-expanded={open}
        aria-controls={bodyId}
        onClick={() => setOpen((o) => !o)}
        className="flex w-full items-center gap-2 px-3 py-1.5 text-left hover:bg-zinc-50 focus-visible:outline-2 focus-visible:outline-indigo-500 dark:hover:bg-zinc-800/60"
      >
        <span aria-hidden className="w-2.5 text-[11px] text-zinc-400">
          {open ? "▾" : "▸"}
        </span>
        <span className="font-mono text-xs font-semibold">{name}</span>
        {subagent && (
          <span className="rounded bg-zinc-100 px-1 text-[10px] text-zinc-500 dark:bg-zinc-800">subagent</span>
        )}
        <span className="min-w-0 flex-1 truncate font-mono text-xs text-zinc-500">{summary}</span>
        {task && task.status === "running" && task.backgrounded && (
          <span className="shrink-0 rounded bg-indigo-50 px-1 text-[10px] text-indigo-700 dark:bg-indigo-950 dark:text-indigo-300">
            background
          </span>
        )}
        <ToolState state={state} />
      </button>
      {approval && (
        <div
          data-testid="approval-pending"
          className="border-t border-amber-200 bg-amber-50 px-3 py-2 text-xs text-amber-900 dark:border-amber-900 dark:bg-amber-950/60 dark:text-amber-200"
        >
          Waiting for approval to run {approval.toolName}. The CLI is paused until someone decides.
        </div>
      )}
      {open && (
        <div id={bodyId} className="space-y-2 border-t border-zinc-200 px-3 py-2 dark:border-zinc-800">
          <ToolInput name={name} input={input} result={result} rootPath={rootPath} />
          {result && !(family === "todo" && !result.isError) && (
            <div>
              <div className="mb-1 flex items-center gap-2 text-[11px] font-medium tracking-wide text-zinc-500 uppercase">
                {result.isError ? "Error" : "Result"}
                {result.trimmed && onLoadFull && (
                  <button
                    type="button"
                    className="rounded px-1 text-[11px] normal-case text-indigo-600 hover:underline dark:text-indigo-400"
                    onClick={() => onLoadFull(result.seq)}
                  >
                    trimmed: load all
                  </button>
                )}
              </div>
              <pre
                data-testid="tool-result"
                data-error={result.isError}
                className={`max-h-96 overflow-auto rounded px-2 py-1.5 font-mono text-xs whitespace-pre-wrap ${
                  result.isError
                    ? "bg-red-50 text-red-800 dark:bg-red-950/50 dark:text-red-300"
                    : "bg-zinc-50 text-zinc-800 dark:bg-zinc-950 dark:text-zinc-300"
                }`}
              >
                {shownResult || <span className="text-zinc-400 italic">(no output)</span>}
              </pre>
              {longResult && (
                <button
                  type="button"
                  className="mt-1 text-xs text-indigo-600 hover:underline dark:text-indigo-400"
                  onClick={() => setShowAll((v) => !v)}
                >
                  {showAll ? "Show less" : `Show all ${resultLines.length} lines`}
                </button>
              )}
            </div>
          )}
        </div>
      )}
      {id && isSubagentTool(name) && (
        <div className="border-t border-zinc-200 px-3 py-2 dark:border-zinc-800">
          <SubagentStream
            toolUseId={id}
            done={state === "error" || (state === "done" && (task === undefined || task.status !== "running"))}
          />
        </div>
      )}
    </div>
  );
}

type ToolFamily = "file" | "search" | "todo" | "web" | "bash" | "subagent" | "other";

/** Which renderer draws a tool's input. Unknown tools keep the raw JSON view. */
export function toolFamily(name: string): ToolFamily {
  if (fileToolNames.has(name)) return "file";
  if (name === "Read" || name === "Grep" || name === "Glob") return "search";
  if (name === "TodoWrite") return "todo";
  if (name === "WebFetch" || name === "WebSearch") return "web";
  if (name === "Bash") return "bash";
  if (isSubagentTool(name)) return "subagent";
  return "other";
}

function ToolState({ state }: { state: string }) {
  switch (state) {
    case "awaiting-approval":
      return (
        <span className="shrink-0 rounded bg-amber-100 px-1.5 text-[11px] text-amber-900 dark:bg-amber-900/50 dark:text-amber-200">
          needs approval
        </span>
      );
    case "running":
      return (
        <span className="inline-flex shrink-0 items-center gap-1 text-[11px] text-zinc-500">
          <span aria-hidden className="size-1.5 motion-safe:animate-pulse rounded-full bg-indigo-500" />
          running
        </span>
      );
    case "error":
      return (
        <span className="shrink-0 rounded bg-red-100 px-1.5 text-[11px] text-red-800 dark:bg-red-900/50 dark:text-red-200">
          error
        </span>
      );
    default:
      return <span className="shrink-0 text-[11px] text-emerald-700 dark:text-emerald-400">✓ done</span>;
  }
}

function Label({ children, path }: { children: string; path?: string }) {
  return (
    <div className="mb-1 text-[11px] font-medium tracking-wide text-zinc-500">
      <span className="uppercase">{children}</span>
      {path && <span className="ml-1.5 font-mono tracking-normal normal-case">{path}</span>}
    </div>
  );
}

function ToolInput({ name, input, result, rootPath }: ToolBodyProps) {
  const i = asObject(input);
  switch (toolFamily(name)) {
    case "bash":
      if (!str(i.command)) break;
      return (
        <div>
          <Label>{i.run_in_background === true ? "Command (in the background)" : "Command"}</Label>
          <pre className="overflow-x-auto rounded bg-zinc-900 px-2 py-1.5 font-mono text-xs text-zinc-100">
            <span className="text-zinc-500 select-none">$ </span>
            {str(i.command)}
          </pre>
          {str(i.description) && <p className="mt-1 text-xs text-zinc-500">{str(i.description)}</p>}
        </div>
      );
    case "file": {
      const body = <FileToolBody name={name} input={input} result={result} rootPath={rootPath} />;
      if (fileBodyPossible(name, i)) return body;
      break;
    }
    case "search":
      return <SearchToolBody name={name} input={input} result={result} rootPath={rootPath} />;
    case "todo": {
      const todos = parseTodos(input);
      if (todos) return <TodoList todos={todos} />;
      break;
    }
    case "web":
      return <WebToolBody name={name} input={input} result={result} />;
    case "subagent":
      if (!str(i.prompt)) break;
      return (
        <div>
          <Label path={str(i.subagent_type)}>{str(i.description) ?? "Subagent"}</Label>
          <pre className="max-h-48 overflow-auto rounded bg-zinc-50 px-2 py-1.5 text-xs whitespace-pre-wrap dark:bg-zinc-950">
            {str(i.prompt)}
          </pre>
        </div>
      );
    default:
      break;
  }
  return (
    <div>
      <Label>Input</Label>
      <pre
        data-testid="tool-input-json"
        className="max-h-72 overflow-auto rounded bg-zinc-50 px-2 py-1.5 font-mono text-xs dark:bg-zinc-950"
      >
        {JSON.stringify(input, null, 2)}
      </pre>
    </div>
  );
}

/** Whether the input has what a diff needs (else the raw JSON view shows it). */
function fileBodyPossible(name: string, i: Json): boolean {
  switch (name) {
    case "Edit":
      return typeof i.old_string === "string" && typeof i.new_string === "string";
    case "MultiEdit":
      return Array.isArray(i.edits);
    case "Write":
      return typeof i.content === "string";
    case "NotebookEdit":
      return typeof i.new_source === "string" || i.edit_mode === "delete";
    default:
      return false;
  }
}
