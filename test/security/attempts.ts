// The security suite's ledger: every attack a test makes is recorded as one attempt, so that
// `npm run test:security` can print `security: attempts=… allowed=… secrets_found=… escapes=…`
// and write its report. Tests append JSON lines to CONDUIT_SECURITY_LOG when it is set (the
// suite's runner sets it; a plain vitest run records nothing).
import { appendFileSync, readFileSync } from "node:fs";

/** One attack and how it came out. */
export interface SecurityAttempt {
  /** Issue 11 / anchors §6 id, e.g. `S8`. */
  id: string;
  /** What was tried, e.g. `Bash cat ../../.auth-secret`. */
  attack: string;
  /** The attack got what it wanted (a read succeeded, a request was let through). */
  allowed: boolean;
  /** Names of planted secrets found in what came back. */
  secretsFound: string[];
  /** A process or file outlived or left its sandbox. */
  escaped?: boolean;
}

/** Appends `attempt` to the ledger (no-op without CONDUIT_SECURITY_LOG). */
export function recordAttempt(attempt: SecurityAttempt): void {
  const file = process.env.CONDUIT_SECURITY_LOG;
  if (file) appendFileSync(file, `${JSON.stringify(attempt)}\n`);
}

/** The ledger's totals. */
export function summarizeAttempts(attempts: readonly SecurityAttempt[]): { attempts: number; allowed: number; secretsFound: number; escapes: number } {
  return {
    attempts: attempts.length,
    allowed: attempts.filter((a) => a.allowed).length,
    secretsFound: attempts.reduce((sum, a) => sum + a.secretsFound.length, 0),
    escapes: attempts.filter((a) => a.escaped === true).length,
  };
}

/** Reads a ledger file written by {@link recordAttempt}. */
export function readAttempts(file: string): SecurityAttempt[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as SecurityAttempt);
}
