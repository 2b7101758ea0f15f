import { describe, expect, it } from "vitest";
import { MAX_APPROVAL_DEADLINE_SEC, ZApprovalDeadlineInput } from "./approval-settings";

function issueOf(value: unknown): string | undefined {
  const parsed = ZApprovalDeadlineInput.safeParse(value);
  return parsed.success ? undefined : parsed.error.issues[0]?.message;
}

describe("ZApprovalDeadlineInput", () => {
  it("takes null (never) and whole seconds from 30 seconds to 7 days", () => {
    for (const approvalDeadlineSec of [null, 30, 600, 86_400, 7 * 24 * 60 * 60]) {
      expect(ZApprovalDeadlineInput.parse({ approvalDeadlineSec })).toEqual({ approvalDeadlineSec });
    }
    expect(MAX_APPROVAL_DEADLINE_SEC).toBe(604_800);
  });

  it("refuses too short, too long and fractional deadlines, each with its own message", () => {
    expect(issueOf({ approvalDeadlineSec: 29 })).toBe("The approval deadline must be at least 30 seconds.");
    expect(issueOf({ approvalDeadlineSec: 0 })).toMatch(/at least 30 seconds/);
    expect(issueOf({ approvalDeadlineSec: -600 })).toMatch(/at least 30 seconds/);
    expect(issueOf({ approvalDeadlineSec: 604_801 })).toMatch(/at most 7 days \(604800 seconds\)/);
    expect(issueOf({ approvalDeadlineSec: 90.5 })).toBe("The approval deadline must be a whole number of seconds.");
  });

  it("refuses a missing value and anything that is not a number or null", () => {
    const typeMessage = "The approval deadline must be a number of seconds, or null for never.";
    expect(issueOf({})).toBe(typeMessage);
    expect(issueOf({ approvalDeadlineSec: "600" })).toBe(typeMessage);
    expect(issueOf({ approvalDeadlineSec: "never" })).toBe(typeMessage);
    expect(issueOf({ approvalDeadlineSec: Number.NaN })).toBeDefined();
    expect(issueOf({ approvalDeadlineSec: Number.POSITIVE_INFINITY })).toBeDefined();
  });
});
