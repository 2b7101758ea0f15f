import { describe, expect, it } from "vitest";
import {
  deadlineChoices,
  deadlineValue,
  formatDeadline,
  parseDeadlineValue,
} from "./approval-settings-format";

describe("formatDeadline", () => {
  it("names every choice the way the select shows it", () => {
    expect(deadlineChoices.map(formatDeadline)).toEqual([
      "1 minute",
      "2 minutes",
      "5 minutes",
      "10 minutes",
      "30 minutes",
      "1 hour",
      "4 hours",
      "24 hours",
      "never",
    ]);
  });

  it("spells out deadlines set outside the choices", () => {
    expect(formatDeadline(30)).toBe("30 seconds");
    expect(formatDeadline(90)).toBe("1 minute 30 seconds");
    expect(formatDeadline(5400)).toBe("1 hour 30 minutes");
    expect(formatDeadline(129_600)).toBe("1 day 12 hours");
    expect(formatDeadline(604_800)).toBe("7 days");
  });
});

describe("deadline select values", () => {
  it("round-trip every choice, never included", () => {
    for (const choice of deadlineChoices) expect(parseDeadlineValue(deadlineValue(choice))).toBe(choice);
    expect(deadlineValue(null)).toBe("never");
  });

  it("refuse anything else", () => {
    for (const value of ["", "abc", "-60", "1.5", "0"]) expect(parseDeadlineValue(value)).toBeUndefined();
  });
});
