/**
 * A request that does not fit its schema, said in people's words. Zod's own messages ("Too big:
 * expected number to be <=1000000", prefixed with the field's code name) reached the pages as is
 * (issue 38); a schema's own message ("Use at most 80 characters.") is already meant for people
 * and is kept. Pure.
 */
import type { z } from "zod";

/** Fields whose code name reads badly as words. */
const labels: Record<string, string> = {
  monthlyBudgetUsd: "The monthly budget",
  maxBudgetUsd: "The budget",
  email: "The email address",
  approvalDeadlineSec: "The approval deadline",
};

/** Zod's defaults start so; a schema's own message does not. */
const zodDefault = /^(Too big|Too small|Invalid|Unrecognized key|Expected|Required)/;

function labelOf(path: readonly PropertyKey[]): string {
  const key = [...path].reverse().find((p) => typeof p === "string");
  if (typeof key !== "string") return "A value";
  if (labels[key]) return labels[key];
  const words = key
    .replace(/Usd$/, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase();
  return `The ${words}`;
}

function amount(path: readonly PropertyKey[], n: number | bigint): string {
  const key = String([...path].reverse().find((p) => typeof p === "string") ?? "");
  const value = Number(n);
  return /Usd$/.test(key) ? `$${value.toLocaleString("en-US")}` : value.toLocaleString("en-US");
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/** The first issue of a failed parse, as one sentence. */
export function describeIssue(issue: z.core.$ZodIssue | undefined): string {
  if (!issue) return "The request is not valid.";
  if (!zodDefault.test(issue.message)) return issue.message;
  const label = labelOf(issue.path);
  switch (issue.code) {
    case "too_big": {
      const max = amount(issue.path, issue.maximum as number);
      if (issue.origin === "string") return `${label} can have at most ${max} characters.`;
      if (issue.origin === "array" || issue.origin === "set") return `${label} can have at most ${max} entries.`;
      return `${label} can be at most ${max}.`;
    }
    case "too_small": {
      const min = amount(issue.path, issue.minimum as number);
      if (issue.origin === "string") return Number(issue.minimum) <= 1 ? `${label} is required.` : `${label} needs at least ${min} characters.`;
      if (issue.origin === "array" || issue.origin === "set") return `${label} needs at least ${min} entries.`;
      return issue.inclusive === false ? `${label} must be more than ${min}.` : `${label} must be at least ${min}.`;
    }
    case "invalid_type":
      return issue.message.includes("received undefined") ? `${label} is missing.` : `${label} must be ${article(issue.expected)}.`;
    case "invalid_value":
      return `${label} must be one of: ${issue.values.map((v) => String(v)).join(", ")}.`;
    case "invalid_format":
      return issue.format === "email" ? "Enter a valid email address." : `${label} is not in the expected form.`;
    case "unrecognized_keys":
      return `This request does not take ${issue.keys.length === 1 ? "the field" : "the fields"} ${issue.keys.join(", ")}.`;
    default:
      return `${label} is not valid.`;
  }
}
