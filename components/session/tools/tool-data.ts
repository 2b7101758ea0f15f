/**
 * What the tool cards show besides diffs, read loosely from tool inputs and results: TodoWrite
 * checklists, subagent nesting, Read/Grep/Glob figures, WebFetch/WebSearch titles. Pure, no React.
 */
import type { ConversationItem, ToolResultView } from "../conversation";

type Json = Record<string, unknown>;

function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

// ---------------------------------------------------------------------------------------------
// TodoWrite

/** What every tool card's body gets: the call, its result once there, and the workspace root for paths. */
export interface ToolBodyProps {
  name: string;
  input: unknown;
  result?: ToolResultView;
  rootPath?: string;
}

export type TodoStatus = "pending" | "in_progress" | "completed";

export interface Todo {
  content: string;
  status: TodoStatus;
  /** What the model shows while the item is in progress ("Running the tests"). */
  activeForm?: string;
}

/** The checklist of a TodoWrite input; items without text are dropped, unknown statuses read as pending. */
export function parseTodos(input: unknown): Todo[] | undefined {
  const todos = asObject(input)?.todos;
  if (!Array.isArray(todos)) return undefined;
  const out: Todo[] = [];
  for (const raw of todos) {
    const t = asObject(raw);
    const content = str(t?.content)?.trim();
    if (!t || !content) continue;
    const status = str(t.status);
    out.push({
      content,
      status: status === "in_progress" || status === "completed" ? status : "pending",
      ...(str(t.activeForm) ? { activeForm: str(t.activeForm) } : {}),
    });
  }
  return out;
}

/** The session's latest TodoWrite checklist (the one pinned above the prompt box), with its seq. */
export function latestTodos(items: readonly ConversationItem[]): { seq: number; todos: Todo[] } | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.kind !== "tool" || item.name !== "TodoWrite" || item.parentToolUseId) continue;
    const todos = parseTodos(item.input);
    if (todos) return { seq: item.seq, todos };
  }
  return undefined;
}

export function todoCounts(todos: readonly Todo[]): { done: number; total: number } {
  return { done: todos.filter((t) => t.status === "completed").length, total: todos.length };
}

// ---------------------------------------------------------------------------------------------
// subagents

export interface NestedConversation {
  /** The items shown at the top level, in order. */
  top: ConversationItem[];
  /** The subagent's items under each parent tool_use id, in order. */
  children: Map<string, ConversationItem[]>;
}

/**
 * Moves each subagent's items under the tool call that started it (`parent_tool_use_id`). Items
 * whose parent is not in the list (a log read from the middle) stay at the top level.
 */
export function nestSubagents(items: readonly ConversationItem[]): NestedConversation {
  const toolIds = new Set(items.flatMap((i) => (i.kind === "tool" ? [i.id] : [])));
  const top: ConversationItem[] = [];
  const children = new Map<string, ConversationItem[]>();
  for (const item of items) {
    const parent = "parentToolUseId" in item ? item.parentToolUseId : undefined;
    if (parent && toolIds.has(parent)) {
      const list = children.get(parent) ?? [];
      list.push(item);
      children.set(parent, list);
    } else top.push(item);
  }
  return { top, children };
}

/** Tools that start a subagent: `Agent` in API requests, `Task` in `init.tools` (protocol §4.1). */
export function isSubagentTool(name: string): boolean {
  return name === "Agent" || name === "Task";
}

// ---------------------------------------------------------------------------------------------
// Read, Grep, Glob

export interface SearchFigures {
  /** What was looked at or for: the file, the pattern. */
  target: string;
  /** Where: the directory or glob filter of a search. */
  scope?: string;
  /** "12 lines", "3 files", "5 matches". */
  count?: string;
  /** Paths the result names, for Glob and files-with-matches Grep. */
  paths: string[];
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : word.endsWith("h") ? "es" : "s"}`;
}

/** Lines of a result text, without the CLI's system reminders and trailing blank lines. */
function resultLines(text: string): string[] {
  return text
    .replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, "")
    .split("\n")
    .filter((line, i, all) => line.trim() !== "" || i < all.length - 1)
    .filter((line) => line.trim() !== "");
}

export function searchFigures(name: string, input: unknown, result: ToolResultView | undefined): SearchFigures {
  const i = asObject(input) ?? {};
  const out = asObject(result?.structured);
  const ok = result !== undefined && !result.isError;
  switch (name) {
    case "Read": {
      const file = asObject(out?.file);
      const lines = num(file?.numLines);
      const total = num(file?.totalLines);
      const start = num(file?.startLine) ?? num(i.offset);
      let count: string | undefined;
      if (lines !== undefined)
        count =
          total !== undefined && total > lines
            ? `lines ${start ?? 1}–${(start ?? 1) + lines - 1} of ${total}`
            : plural(lines, "line");
      else if (ok) count = plural(resultLines(result.text).length, "line");
      return { target: str(i.file_path) ?? str(file?.filePath) ?? "", count, paths: [] };
    }
    case "Glob": {
      const filenames = Array.isArray(out?.filenames)
        ? out.filenames.filter((f): f is string => typeof f === "string")
        : undefined;
      const paths = filenames ?? (ok ? resultLines(result.text).filter((l) => !l.startsWith("No files found")) : []);
      const n = num(out?.numFiles) ?? paths.length;
      return {
        target: str(i.pattern) ?? "",
        scope: str(i.path),
        count: ok || filenames ? plural(n, "file") : undefined,
        paths,
      };
    }
    case "Grep": {
      const mode = str(i.output_mode) ?? str(out?.mode) ?? "files_with_matches";
      const filenames = Array.isArray(out?.filenames)
        ? out.filenames.filter((f): f is string => typeof f === "string")
        : [];
      let count: string | undefined;
      if (num(out?.numMatches) !== undefined) count = plural(num(out?.numMatches)!, "match");
      else if (mode === "files_with_matches" && (num(out?.numFiles) !== undefined || ok))
        count = plural(
          num(out?.numFiles) ?? resultLines(result?.text ?? "").filter((l) => !/^(Found|No files)/.test(l)).length,
          "file",
        );
      else if (ok) count = plural(num(out?.numLines) ?? resultLines(result.text).length, "line");
      const scope = [str(i.path), str(i.glob), str(i.type)].filter(Boolean).join(" · ") || undefined;
      return {
        target: str(i.pattern) ?? "",
        scope,
        count,
        paths: mode === "files_with_matches" ? filenames : [],
      };
    }
    default:
      return { target: "", paths: [] };
  }
}

// ---------------------------------------------------------------------------------------------
// WebFetch, WebSearch

export interface WebLink {
  title: string;
  url: string;
}

export interface WebFigures {
  /** The URL fetched or the query searched. */
  target: string;
  /** The fetch's HTTP status and size, where the result says. */
  detail?: string;
  links: WebLink[];
}

/** Titles and URLs from a WebSearch result: structured `results[].content[]`, else `[title](url)` / JSON in text. */
function searchLinks(out: Json | undefined, text: string): WebLink[] {
  const links: WebLink[] = [];
  const push = (title: unknown, url: unknown) => {
    if (typeof url === "string" && /^https?:\/\//.test(url) && !links.some((l) => l.url === url))
      links.push({ title: typeof title === "string" && title.trim() ? title.trim() : url, url });
  };
  const results = Array.isArray(out?.results) ? out.results : [];
  for (const r of results) {
    const content = asObject(r)?.content;
    if (Array.isArray(content)) for (const c of content) push(asObject(c)?.title, asObject(c)?.url);
  }
  if (links.length > 0) return links;
  for (const m of text.matchAll(/"title"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"url"\s*:\s*"([^"]+)"/g)) push(m[1], m[2]);
  for (const m of text.matchAll(/\[([^\]]+)\]\((https?:\/\/[^)\s]+)\)/g)) push(m[1], m[2]);
  return links;
}

export function webFigures(name: string, input: unknown, result: ToolResultView | undefined): WebFigures {
  const i = asObject(input) ?? {};
  const out = asObject(result?.structured);
  if (name === "WebFetch") {
    const code = num(out?.code);
    const bytes = num(out?.bytes);
    const detail = [
      code !== undefined ? `HTTP ${code}${str(out?.codeText) ? ` ${str(out?.codeText)}` : ""}` : undefined,
      bytes !== undefined ? `${Math.round(bytes / 1024)} KB` : undefined,
    ]
      .filter(Boolean)
      .join(" · ");
    return { target: str(i.url) ?? str(out?.url) ?? "", detail: detail || undefined, links: [] };
  }
  return { target: str(i.query) ?? str(out?.query) ?? "", links: searchLinks(out, result?.text ?? "") };
}

// ---------------------------------------------------------------------------------------------
// background tasks

export interface BackgroundTask {
  taskId: string;
  type: string;
  description: string;
}

/** The tasks of a `system/background_tasks_changed` frame (replace semantics, protocol §4). */
export function readBackgroundTasks(tasks: unknown): BackgroundTask[] {
  if (!Array.isArray(tasks)) return [];
  return tasks.flatMap((raw) => {
    const t = asObject(raw);
    const taskId = str(t?.task_id);
    if (!t || !taskId) return [];
    return [{ taskId, type: str(t.task_type) ?? "task", description: str(t.description) ?? taskId }];
  });
}
