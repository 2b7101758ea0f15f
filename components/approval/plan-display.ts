/**
 * How an ExitPlanMode approval names its plan in one line (the inbox entry's summary, the
 * notification): the plan's first line without its Markdown marks, or a plain word that
 * Claude Code sent none.
 */

/** What the one line says when there is no plan text. */
export const noPlanSummary = "No plan sent: Claude Code sent no plan text";

const maxSummaryChars = 160;

/** The plan's first non-empty line, Markdown heading, list and emphasis marks removed; null when empty. */
export function planHeadline(plan: string | null | undefined): string | null {
  if (!plan) return null;
  for (const raw of plan.split("\n")) {
    const line = raw
      .trim()
      .replace(/^#{1,6}\s+/, "")
      .replace(/^(?:[-*+]|\d+[.)])\s+/, "")
      .replace(/^>\s*/, "")
      .replace(/(\*\*|__|`)/g, "")
      .trim();
    if (line === "" || /^[-*_=]{3,}$/.test(line)) continue;
    return line.length > maxSummaryChars ? `${line.slice(0, maxSummaryChars - 1)}…` : line;
  }
  return null;
}

/** The one-line summary of a plan approval. */
export function planSummary(plan: string | null | undefined): string {
  const headline = planHeadline(plan);
  if (headline === null) return noPlanSummary;
  return /^plan\b/i.test(headline) ? headline : `Plan: ${headline}`;
}
