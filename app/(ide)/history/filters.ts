/**
 * Checks the history page's filters before they are used, so a bad one is reported by name
 * ("From" is not a date) instead of crashing the page or being dropped without a word.
 */

export const historyStatuses = ["live", "ended", "stopped", "crashed", "dead"] as const;

type Raw = Record<string, string | string[] | undefined>;

function first(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v?.trim() ? v.trim() : undefined;
}

/** True for a real calendar day written YYYY-MM-DD (2026-02-30 is not one). */
export function isCalendarDay(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return date.toISOString().slice(0, 10) === value;
}

/** The filters with the bad ones removed, and one sentence per bad one. */
export function checkHistoryFilters(input: Raw): { clean: Record<string, string>; problems: string[] } {
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(input)) {
    const value = first(v);
    if (value !== undefined) clean[k] = value;
  }
  const problems: string[] = [];
  for (const [key, label] of [
    ["from", "From"],
    ["to", "To"],
  ] as const) {
    const value = clean[key];
    if (value !== undefined && !isCalendarDay(value)) {
      problems.push(`“${label}” must be a date like 2026-05-31; “${value.slice(0, 40)}” is not one.`);
      delete clean[key];
    }
  }
  if (clean.from && clean.to && clean.from > clean.to)
    problems.push(`“From” (${clean.from}) is after “To” (${clean.to}).`);
  if (clean.status !== undefined && !(historyStatuses as readonly string[]).includes(clean.status)) {
    problems.push(`“${clean.status.slice(0, 40)}” is not a status; choose one of ${historyStatuses.join(", ")}.`);
    delete clean.status;
  }
  return { clean, problems };
}
