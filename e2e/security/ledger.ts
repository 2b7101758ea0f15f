/**
 * The security suite's record of attempts: every attack a spec makes is one line, refused or
 * allowed, so `npm run test:security` can print how many were tried and how many got through,
 * whatever else the specs assert. Without CONDUIT_SECURITY_LEDGER (a spec run on its own) it
 * records nothing.
 */
import { appendFileSync } from "node:fs";

export type AttemptKind =
  /** reaching data or an action the attacker has no right to */
  | "access"
  /** leaving the session's sandbox (another path, a process that outlives the session) */
  | "escape";

export interface Attempt {
  /**
   * The probe this attempt belongs to: a stable id listed in `probes.ts` (the suite fails when a
   * listed probe recorded nothing, so a spec that stops running cannot pass unnoticed).
   */
  probe?: string;
  /** The S-number of ../shared/research/anchors-reliability.md §6 this belongs to, e.g. "S8". */
  check: string;
  /** What was tried, in a few words. */
  attack: string;
  kind: AttemptKind;
  /** True when the attack got through. */
  allowed: boolean;
  detail?: string;
}

/** Appends one attempt; returns it so a spec can assert on `allowed` too. */
export function recordAttempt(attempt: Attempt): Attempt {
  const file = process.env.CONDUIT_SECURITY_LEDGER;
  if (file) appendFileSync(file, `${JSON.stringify(attempt)}\n`);
  return attempt;
}
