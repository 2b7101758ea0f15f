import { describe, expect, it } from "vitest";
import { checkHistoryFilters, isCalendarDay } from "./filters";

describe("checkHistoryFilters", () => {
  it("passes good filters through, trimmed, and drops empty ones", () => {
    expect(
      checkHistoryFilters({ q: " fix ", from: "2026-05-01", to: "2026-05-31", status: "ended", user: "" }),
    ).toEqual({
      clean: { q: "fix", from: "2026-05-01", to: "2026-05-31", status: "ended" },
      problems: [],
    });
  });

  it("names each bad filter and removes it", () => {
    const { clean, problems } = checkHistoryFilters({ from: "garbage", to: "2026-02-30", status: "zombie", q: "x" });
    expect(clean).toEqual({ q: "x" });
    expect(problems).toHaveLength(3);
    expect(problems[0]).toContain("“From”");
    expect(problems[0]).toContain("garbage");
    expect(problems[1]).toContain("“To”");
    expect(problems[2]).toContain("zombie");
  });

  it("refuses a range that ends before it starts", () => {
    expect(checkHistoryFilters({ from: "2026-06-01", to: "2026-05-01" }).problems).toEqual([
      "“From” (2026-06-01) is after “To” (2026-05-01).",
    ]);
  });

  it("takes the first of repeated parameters", () => {
    expect(checkHistoryFilters({ from: ["2026-01-02", "x"] }).clean).toEqual({ from: "2026-01-02" });
  });
});

describe("isCalendarDay", () => {
  it("accepts only real days in YYYY-MM-DD", () => {
    expect(isCalendarDay("2024-02-29")).toBe(true);
    expect(isCalendarDay("2026-02-29")).toBe(false);
    expect(isCalendarDay("2026-13-01")).toBe(false);
    expect(isCalendarDay("2026-1-01")).toBe(false);
    expect(isCalendarDay("99999-01-01")).toBe(false);
  });
});
