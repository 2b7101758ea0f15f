import { describe, expect, it } from "vitest";
import { newRowId } from "./row-id";

describe("newRowId", () => {
  it("makes 25-character ids in cuid's alphabet that sort in the order they were made", () => {
    const ids = Array.from({ length: 5_000 }, () => newRowId());
    for (const id of ids) expect(id).toMatch(/^c[0-9a-z]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
