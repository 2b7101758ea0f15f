import { describe, expect, it } from "vitest";
import { noPlanSummary, planHeadline, planSummary } from "./plan-display";

describe("planHeadline", () => {
  it("takes the first line without its heading marks", () => {
    expect(planHeadline("# Plan: tidy the demo workspace\n\n1. Create a file")).toBe("Plan: tidy the demo workspace");
  });

  it("skips blank lines and rules, and drops list and emphasis marks", () => {
    expect(planHeadline("\n\n---\n1. **Add** the `retry` flag\n2. Test")).toBe("Add the retry flag");
  });

  it("is null for nothing", () => {
    expect(planHeadline(null)).toBeNull();
    expect(planHeadline("  \n \n")).toBeNull();
  });

  it("cuts a long line", () => {
    const line = planHeadline("x".repeat(500))!;
    expect(line.length).toBe(160);
    expect(line.endsWith("…")).toBe(true);
  });
});

describe("planSummary", () => {
  it("names the plan", () => {
    expect(planSummary("# Plan: tidy up")).toBe("Plan: tidy up");
    expect(planSummary("Refactor the parser")).toBe("Plan: Refactor the parser");
  });

  it("says plainly when there is none", () => {
    expect(planSummary(null)).toBe(noPlanSummary);
  });
});
