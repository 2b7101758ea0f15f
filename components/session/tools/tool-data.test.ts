import { describe, expect, it } from "vitest";
import { buildConversation, type ConversationItem } from "../conversation";
import { fixtureLog } from "../test-support";
import {
  latestTodos,
  nestSubagents,
  parseTodos,
  readBackgroundTasks,
  searchFigures,
  todoCounts,
  webFigures,
} from "./tool-data";

const tool = (seq: number, name: string, input: unknown, extra: Partial<ConversationItem> = {}): ConversationItem =>
  ({ kind: "tool", key: String(seq), seq, id: `t${seq}`, name, input, subagent: false, ...extra }) as ConversationItem;

describe("TodoWrite", () => {
  it("parses the checklist; unknown statuses read as pending, empty items are dropped", () => {
    const todos = parseTodos({
      todos: [
        { content: "Write the tests", status: "completed", activeForm: "Writing the tests" },
        { content: "Run them", status: "in_progress", activeForm: "Running them" },
        { content: "Ship", status: "someday" },
        { content: "  ", status: "pending" },
        "junk",
      ],
    });
    expect(todos).toEqual([
      { content: "Write the tests", status: "completed", activeForm: "Writing the tests" },
      { content: "Run them", status: "in_progress", activeForm: "Running them" },
      { content: "Ship", status: "pending" },
    ]);
    expect(todoCounts(todos!)).toEqual({ done: 1, total: 3 });
    expect(parseTodos({ nope: 1 })).toBeUndefined();
  });

  it("pins the latest top-level list, not a subagent's", () => {
    const items = [
      tool(1, "TodoWrite", { todos: [{ content: "a", status: "pending" }] }),
      tool(2, "Bash", { command: "ls" }),
      tool(3, "TodoWrite", { todos: [{ content: "a", status: "completed" }] }),
      tool(4, "TodoWrite", { todos: [{ content: "sub", status: "pending" }] }, { parentToolUseId: "t9" }),
    ];
    expect(latestTodos(items)).toEqual({ seq: 3, todos: [{ content: "a", status: "completed" }] });
    expect(latestTodos([tool(1, "Bash", {})])).toBeUndefined();
  });
});

describe("subagents", () => {
  it("nests the real CLI's subagent frames under the Agent call (subagent transcript)", () => {
    const conversation = buildConversation(fixtureLog("subagent"));
    const agent = conversation.items.find((i) => i.kind === "tool" && i.name === "Agent");
    expect(agent?.kind).toBe("tool");
    if (agent?.kind !== "tool") return;
    const { top, children } = nestSubagents(conversation.items);
    const nested = children.get(agent.id) ?? [];
    expect(nested.map((i) => i.kind)).toEqual(["tool", "assistant"]);
    expect(nested[0]).toMatchObject({ kind: "tool", name: "Bash", parentToolUseId: agent.id });
    expect(nested[1]).toMatchObject({ kind: "assistant", text: "subagent finished" });
    expect(top).not.toContain(nested[0]);
    // the CLI's task frames say when the subagent is done
    expect(agent.task).toMatchObject({ status: "completed", backgrounded: true });
    // and the background list ends empty
    expect(conversation.backgroundTasks).toEqual([]);
  });

  it("keeps items whose parent is missing at the top level", () => {
    const orphan = tool(2, "Bash", {}, { parentToolUseId: "gone" });
    const { top, children } = nestSubagents([tool(1, "Agent", {}), orphan]);
    expect(top).toContain(orphan);
    expect(children.size).toBe(0);
  });
});

describe("Read, Grep, Glob", () => {
  const result = (structured: unknown, text = "") => ({ seq: 1, text, isError: false, structured, trimmed: false });

  it("reads line figures from a Read result", () => {
    const f = searchFigures(
      "Read",
      { file_path: "/w/a.txt" },
      result({ type: "text", file: { filePath: "/w/a.txt", numLines: 10, startLine: 21, totalLines: 300 } }),
    );
    expect(f).toMatchObject({ target: "/w/a.txt", count: "lines 21–30 of 300" });
  });

  it("counts Glob files and Grep matches, from structure or text", () => {
    expect(
      searchFigures("Glob", { pattern: "*.ts" }, result({ filenames: ["/w/a.ts", "/w/b.ts"], numFiles: 2 })),
    ).toMatchObject({
      count: "2 files",
      paths: ["/w/a.ts", "/w/b.ts"],
    });
    expect(searchFigures("Glob", { pattern: "*.md" }, result(undefined, "/w/x.md\n"))).toMatchObject({
      count: "1 file",
    });
    expect(
      searchFigures("Grep", { pattern: "foo", output_mode: "content" }, result({ mode: "content", numMatches: 1 })),
    ).toMatchObject({ count: "1 match" });
    expect(
      searchFigures(
        "Grep",
        { pattern: "foo", path: "src" },
        result(undefined, "Found 2 files\n/w/src/a.ts\n/w/src/b.ts"),
      ),
    ).toMatchObject({ count: "2 files", scope: "src" });
  });
});

describe("web tools and background tasks", () => {
  it("WebSearch titles from structured results or links in the text", () => {
    const structured = {
      query: "q",
      results: [{ tool_use_id: "x", content: [{ title: "Doc", url: "https://a.example/doc" }] }],
    };
    expect(
      webFigures("WebSearch", { query: "q" }, { seq: 1, text: "", isError: false, structured, trimmed: false }),
    ).toEqual({
      target: "q",
      links: [{ title: "Doc", url: "https://a.example/doc" }],
    });
    const text = 'Links: [{"title":"One","url":"https://one.example/"}] and [Two](https://two.example/x)';
    expect(webFigures("WebSearch", { query: "q" }, { seq: 1, text, isError: false, trimmed: false }).links).toEqual([
      { title: "One", url: "https://one.example/" },
      { title: "Two", url: "https://two.example/x" },
    ]);
    expect(
      webFigures(
        "WebFetch",
        { url: "https://a.example" },
        { seq: 1, text: "", isError: false, structured: { code: 200, codeText: "OK", bytes: 4096 }, trimmed: false },
      ),
    ).toMatchObject({ target: "https://a.example", detail: "HTTP 200 OK · 4 KB" });
  });

  it("reads background_tasks_changed's tasks", () => {
    expect(
      readBackgroundTasks([{ task_id: "b1", task_type: "local_bash", description: "sleep" }, { nope: true }]),
    ).toEqual([{ taskId: "b1", type: "local_bash", description: "sleep" }]);
    expect(readBackgroundTasks(undefined)).toEqual([]);
  });
});
