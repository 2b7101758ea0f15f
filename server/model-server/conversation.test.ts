import { describe, expect, it } from "vitest";
import type { Message, MessagesRequest } from "./api-schema";
import { findScenarioTag, findWorkingDirectory, readConversation, summarizeShape } from "./conversation";
import { absolutizeToolInput, chunkText } from "./reply-events";

function request(messages: Message[], system?: MessagesRequest["system"]): MessagesRequest {
  return { model: "m", max_tokens: 10, messages, ...(system !== undefined ? { system } : {}) };
}

describe("readConversation", () => {
  it("finds the latest real prompt, skipping tool_result carriers and reminders", () => {
    const view = readConversation(
      request([
        { role: "user", content: "first prompt" },
        { role: "assistant", content: [{ type: "text", text: "ok" }] },
        {
          role: "user",
          content: [
            { type: "text", text: "<system-reminder>\nCo-Authored-By: someone\n</system-reminder>" },
            { type: "text", text: "second <system-reminder>inline</system-reminder>prompt" },
          ],
        },
        { role: "system", content: "# Environment\n - Primary working directory: /work/ws one\n" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Read", input: { file_path: "/a" } }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "contents", is_error: false },
            { type: "text", text: "The user sent a new message while you were working" },
          ],
        },
        { role: "assistant", content: [{ type: "tool_use", id: "t2", name: "Bash", input: { command: "x" } }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t2", content: [{ type: "text", text: "boom" }], is_error: true },
          ],
        },
      ]),
    );
    expect(view.prompt).toBe("second prompt");
    expect(view.promptIndex).toBe(2);
    expect(view.stepIndex).toBe(2);
    expect(view.cwd).toBe("/work/ws one");
    expect(view.lastToolResults).toEqual([{ toolUseId: "t2", isError: true, text: "boom" }]);
    expect(view.toolUsesSincePrompt.map((use) => use.name)).toEqual(["Read", "Bash"]);
    expect(view.toolResultsSincePrompt.map((result) => result.text)).toEqual(["contents", "boom"]);
  });

  it("takes the newest of several prompts merged into one message", () => {
    const view = readConversation(
      request([
        {
          role: "user",
          content: [
            { type: "text", text: "[scenario:failed]\n" },
            { type: "text", text: "plain hello" },
          ],
        },
      ]),
    );
    expect(view.prompt).toBe("plain hello");
  });

  it("drops the echo of a local slash command in front of the prompt", () => {
    const view = readConversation(
      request([
        {
          role: "user",
          content: [
            { type: "text", text: "<local-command-caveat>Caveat: run locally.</local-command-caveat>\n" },
            {
              type: "text",
              text: "<command-name>/model</command-name>\n <command-args>claude-haiku-4-5</command-args>\n",
            },
            { type: "text", text: "<local-command-stdout>Set model to `claude-haiku-4-5`</local-command-stdout>\n" },
            { type: "text", text: "again [scenario:x]" },
          ],
        },
      ]),
    );
    expect(view.prompt).toBe("again [scenario:x]");
  });

  it("copes with a conversation that has no prompt at all", () => {
    const view = readConversation(
      request([{ role: "user", content: [{ type: "text", text: "<system-reminder>x</system-reminder>" }] }]),
    );
    expect(view).toMatchObject({ prompt: "", promptIndex: -1, stepIndex: 0, cwd: undefined });
  });
});

describe("findWorkingDirectory", () => {
  it("reads the system prompt too, and prefers the latest statement", () => {
    expect(
      findWorkingDirectory(request([{ role: "user", content: "x" }], "Primary working directory: /from/system")),
    ).toBe("/from/system");
    expect(
      findWorkingDirectory(
        request(
          [
            { role: "user", content: "x" },
            { role: "system", content: [{ type: "text", text: " - Primary working directory: /newer" }] },
          ],
          [{ type: "text", text: "Working directory: /older" }],
        ),
      ),
    ).toBe("/newer");
  });
});

describe("helpers", () => {
  it("takes the last scenario tag", () => {
    expect(findScenarioTag("a [scenario:one] b [scenario:two-2.x]")).toBe("two-2.x");
    expect(findScenarioTag("no tag [scenario:] here")).toBeUndefined();
  });

  it("summarises message shapes", () => {
    expect(
      summarizeShape([
        { role: "user", content: "s" },
        { role: "system", content: [{ type: "text" }] },
        { role: "assistant", content: [{ type: "text" }, { type: "tool_use" }] },
      ]),
    ).toBe("u[str] s[text] a[text,tool_use]");
  });

  it("makes relative tool paths absolute and leaves the rest alone", () => {
    expect(
      absolutizeToolInput({ file_path: "a/b.md", path: "/abs", notebook_path: "n.ipynb", command: "ls x" }, "/ws"),
    ).toEqual({
      file_path: "/ws/a/b.md",
      path: "/abs",
      notebook_path: "/ws/n.ipynb",
      command: "ls x",
    });
    expect(absolutizeToolInput({ file_path: "rel" }, undefined)).toEqual({ file_path: "rel" });
  });

  it("chunks text so that the chunks concatenate back", () => {
    const text = "  Several words, with   odd spacing\nand lines. ";
    const chunks = chunkText(text);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join("")).toBe(text);
    expect(chunkText("")).toEqual([""]);
  });
});
