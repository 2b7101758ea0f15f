import { z } from "zod";
import { describe, expect, it } from "vitest";
import { describeIssue } from "./validation-message";

const firstIssue = (schema: z.ZodType, value: unknown) => describeIssue(schema.safeParse(value).error?.issues[0]);

describe("describeIssue", () => {
  it("says a number over its limit in words, dollars as dollars", () => {
    expect(firstIssue(z.object({ monthlyBudgetUsd: z.number().min(0).max(1_000_000).nullable() }), { monthlyBudgetUsd: 5_000_000 })).toBe(
      "The monthly budget can be at most $1,000,000.",
    );
    expect(firstIssue(z.object({ monthlyBudgetUsd: z.number().min(0) }), { monthlyBudgetUsd: -1 })).toBe("The monthly budget must be at least $0.");
    expect(firstIssue(z.object({ approvalDeadlineSec: z.number().int().max(3600) }), { approvalDeadlineSec: 7200 })).toBe(
      "The approval deadline can be at most 3,600.",
    );
  });

  it("names lengths, missing fields, types and choices", () => {
    expect(firstIssue(z.object({ displayName: z.string().max(5) }), { displayName: "abcdefg" })).toBe("The display name can have at most 5 characters.");
    expect(firstIssue(z.object({ name: z.string().min(1) }), { name: "" })).toBe("The name is required.");
    expect(firstIssue(z.object({ name: z.string() }), {})).toBe("The name is missing.");
    expect(firstIssue(z.object({ limit: z.number() }), { limit: "ten" })).toBe("The limit must be a number.");
    expect(firstIssue(z.object({ role: z.enum(["owner", "editor"]) }), { role: "boss" })).toBe("The role must be one of: owner, editor.");
    expect(firstIssue(z.object({ email: z.email() }), { email: "nope" })).toBe("Enter a valid email address.");
    expect(firstIssue(z.object({}).strict(), { extra: 1 })).toBe("This request does not take the field extra.");
  });

  it("keeps a schema's own message, without the field's code name", () => {
    expect(firstIssue(z.object({ name: z.string().max(80, "Use at most 80 characters.") }), { name: "x".repeat(81) })).toBe("Use at most 80 characters.");
  });

  it("never shows zod's wording", () => {
    const said = firstIssue(z.object({ monthlyBudgetUsd: z.number().max(10) }), { monthlyBudgetUsd: 11 });
    expect(said).not.toMatch(/Too big|expected|<=|monthlyBudgetUsd/);
  });
});
