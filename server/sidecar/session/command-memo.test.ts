import { describe, expect, it } from "vitest";
import { CommandMemo, rememberBounded } from "./command-memo";

describe("CommandMemo", () => {
  it("gives a retry the first outcome and does not start the command again", () => {
    const memo = new CommandMemo<Promise<number>>(10);
    let started = 0;
    const first = memo.once("a", () => Promise.resolve(++started));
    const retry = memo.once("a", () => Promise.resolve(++started));
    expect(retry).toBe(first);
    expect(started).toBe(1);
  });

  it("forgets the oldest key once it holds more than its limit", () => {
    const memo = new CommandMemo<string>(2);
    memo.remember("a", "1");
    memo.remember("b", "2");
    memo.remember("c", "3");
    expect(memo.get("a")).toBeUndefined();
    expect(memo.get("b")).toBe("2");
    expect(memo.get("c")).toBe("3");
    expect(memo.size).toBe(2);
    // a forgotten key starts again
    expect(memo.once("a", () => "again")).toBe("again");
    expect(memo.get("b")).toBeUndefined();
  });

  it("rememberBounded keeps a plain map within its limit", () => {
    const map = new Map<string, number>();
    for (let i = 0; i < 5; i++) rememberBounded(map, `k${i}`, i, 3);
    expect([...map.keys()]).toEqual(["k2", "k3", "k4"]);
  });
});
