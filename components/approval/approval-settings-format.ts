/** How the approval settings panel names deadlines and remembered rules. Pure. */

/** The deadlines an owner picks from, in seconds; null is "never". */
export const deadlineChoices: readonly (number | null)[] = [60, 120, 300, 600, 1800, 3600, 14_400, 86_400, null];

/** The `<select>` value of a deadline ("never" for null). */
export function deadlineValue(seconds: number | null): string {
  return seconds === null ? "never" : String(seconds);
}

/** The deadline a `<select>` value stands for; undefined for anything else. */
export function parseDeadlineValue(value: string): number | null | undefined {
  if (value === "never") return null;
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

const units = [
  ["day", 86_400],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
] as const;

/**
 * "10 minutes", "4 hours", "1 minute 30 seconds", "never". Up to a day in hours ("24 hours",
 * as the choices read), longer in days and what is left.
 */
export function formatDeadline(seconds: number | null): string {
  if (seconds === null) return "never";
  let left = Math.max(0, Math.round(seconds));
  if (left === 0) return "0 seconds";
  const parts: string[] = [];
  for (const [name, size] of units) {
    if (name === "day" && left <= 86_400) continue;
    const n = Math.floor(left / size);
    if (n === 0) continue;
    parts.push(`${n} ${name}${n === 1 ? "" : "s"}`);
    left -= n * size;
  }
  return parts.join(" ");
}
