import { describe, expect, it } from "vitest";
import { applyCompletion, filterCommands, findTrigger } from "./triggers";

describe("findTrigger", () => {
  it("opens the slash menu only for the prompt's first word", () => {
    expect(findTrigger("/com", 4)).toEqual({ kind: "slash", query: "com", start: 0, end: 4 });
    expect(findTrigger("/", 1)).toEqual({ kind: "slash", query: "", start: 0, end: 1 });
    expect(findTrigger("/compact now", 12)).toBeUndefined();
    expect(findTrigger("please /compact", 15)).toBeUndefined();
    expect(findTrigger("a/b", 3)).toBeUndefined();
  });

  it("opens file suggestions for an @ word anywhere", () => {
    expect(findTrigger("look at @src/he", 15)).toEqual({ kind: "mention", query: "src/he", start: 8, end: 15 });
    expect(findTrigger("@", 1)).toEqual({ kind: "mention", query: "", start: 0, end: 1 });
    expect(findTrigger("mail me@example.com", 19)).toBeUndefined();
    expect(findTrigger("@src done", 9)).toBeUndefined();
  });
});

describe("applyCompletion", () => {
  it("replaces the trigger and leaves the caret after a space", () => {
    const t = findTrigger("look at @he and more", 11)!;
    expect(applyCompletion("look at @he and more", t, "@src/hello.ts")).toEqual({
      text: "look at @src/hello.ts and more",
      caret: 22,
    });
    const s = findTrigger("/com", 4)!;
    expect(applyCompletion("/com", s, "/compact")).toEqual({ text: "/compact ", caret: 9 });
  });
});

describe("filterCommands", () => {
  it("ranks name prefixes, then names, then descriptions", () => {
    const commands = [
      { name: "review", description: "Review a pull request" },
      { name: "compact", description: "Clear history but keep a summary" },
      { name: "autocompact" },
      { name: "clear", description: "Start over" },
    ];
    expect(filterCommands(commands, "comp").map((c) => c.name)).toEqual(["compact", "autocompact"]);
    expect(filterCommands(commands, "summary").map((c) => c.name)).toEqual(["compact"]);
    expect(filterCommands(commands, "").map((c) => c.name)).toHaveLength(4);
  });
});
