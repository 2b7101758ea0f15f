import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { coalesce } from "./coalesce";

describe("coalesce", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("delivers what arrived before the next task together, in order, once", () => {
    const batches: number[][] = [];
    const c = coalesce<number>((items) => batches.push(items));
    c.push(1);
    c.push(2);
    c.push(3);
    expect(batches).toEqual([]);
    vi.runAllTimers();
    expect(batches).toEqual([[1, 2, 3]]);
    c.push(4);
    vi.runAllTimers();
    expect(batches).toEqual([[1, 2, 3], [4]]);
    vi.runAllTimers();
    expect(batches).toHaveLength(2);
  });

  it("delivers nothing after cancel, and leaves no timer", () => {
    const deliver = vi.fn();
    const c = coalesce<number>(deliver);
    c.push(1);
    c.cancel();
    expect(vi.getTimerCount()).toBe(0);
    vi.runAllTimers();
    expect(deliver).not.toHaveBeenCalled();
  });
});
