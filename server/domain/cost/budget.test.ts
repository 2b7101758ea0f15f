import { describe, expect, it } from "vitest";
import { AppError } from "@/server/shared/errors/app-error";
import { assertWithinBudget, checkBudget, checkBudgets, formatUsd, monthRange } from "./budget";

describe("checkBudget", () => {
  it("allows while the spend is under the limit", () => {
    expect(checkBudget({ limitUsd: 10, spentUsd: 9.99 })).toEqual({ allowed: true });
  });

  it("refuses once the limit is reached, naming the limit and the spend", () => {
    const decision = checkBudget({ limitUsd: 10, spentUsd: 10 });
    expect(decision).toMatchObject({
      allowed: false,
      code: "budget_exceeded",
      scope: "user",
      limitUsd: 10,
      spentUsd: 10,
    });
    if (decision.allowed) throw new Error("expected a refusal");
    expect(decision.message).toContain("$10.00");
    expect(decision.message).toMatch(/Your monthly budget of \$10\.00 is used up: \$10\.00 spent this month \(UTC\)/);
  });

  it("names a workspace budget as such, with who can raise it", () => {
    const decision = checkBudget({ scope: "workspace", limitUsd: 5, spentUsd: 7.257 });
    if (decision.allowed) throw new Error("expected a refusal");
    expect(decision.message).toMatch(/^This workspace's monthly budget of \$5\.00 is used up: \$7\.26 spent/);
    expect(decision.message).toContain("a workspace owner");
  });

  it("has no limit when none is set, and refuses everything at 0", () => {
    expect(checkBudget({ limitUsd: null, spentUsd: 1e6 })).toEqual({ allowed: true });
    expect(checkBudget({ limitUsd: undefined, spentUsd: 1e6 })).toEqual({ allowed: true });
    expect(checkBudget({ limitUsd: 0, spentUsd: 0 })).toMatchObject({ allowed: false, limitUsd: 0 });
    expect(checkBudget({ limitUsd: -3, spentUsd: 0 })).toMatchObject({ allowed: false, limitUsd: 0 });
  });

  it("checkBudgets returns the first refusal", () => {
    expect(
      checkBudgets([
        { scope: "user", limitUsd: 100, spentUsd: 1 },
        { scope: "workspace", limitUsd: 1, spentUsd: 1.5 },
      ]),
    ).toMatchObject({ allowed: false, scope: "workspace" });
    expect(
      checkBudgets([
        { scope: "user", limitUsd: 1, spentUsd: 2 },
        { scope: "workspace", limitUsd: 1, spentUsd: 2 },
      ]),
    ).toMatchObject({ allowed: false, scope: "user" });
    expect(checkBudgets([])).toEqual({ allowed: true });
  });

  it("assertWithinBudget throws an AppError budget_exceeded with the same message", () => {
    const decision = checkBudget({ limitUsd: 2, spentUsd: 3 });
    expect(() => assertWithinBudget({ allowed: true })).not.toThrow();
    try {
      assertWithinBudget(decision);
      throw new Error("expected a throw");
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: "budget_exceeded", details: { scope: "user", limitUsd: 2, spentUsd: 3 } });
      expect((err as AppError).message).toBe(decision.allowed ? "" : decision.message);
    }
  });
});

describe("monthRange", () => {
  it("is the UTC calendar month, half-open", () => {
    expect(monthRange(new Date("2026-02-14T10:00:00Z"))).toEqual({
      from: new Date("2026-02-01T00:00:00Z"),
      to: new Date("2026-03-01T00:00:00Z"),
    });
  });

  it("crosses the year in December and ignores local time zones at the edges", () => {
    expect(monthRange(new Date("2026-12-31T23:59:59.999Z"))).toEqual({
      from: new Date("2026-12-01T00:00:00Z"),
      to: new Date("2027-01-01T00:00:00Z"),
    });
    // 00:30 on 1 March in UTC+2 is still February in UTC
    expect(monthRange(new Date("2026-03-01T00:30:00+02:00")).from).toEqual(new Date("2026-02-01T00:00:00Z"));
  });
});

describe("formatUsd", () => {
  it("shows cents, and four decimals under a dollar", () => {
    expect([formatUsd(12.5), formatUsd(0), formatUsd(0.0008), formatUsd(1)]).toEqual([
      "$12.50",
      "$0.00",
      "$0.0008",
      "$1.00",
    ]);
  });
});
