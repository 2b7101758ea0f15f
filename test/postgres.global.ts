// Makes PostgreSQL available to the integration tests that need it: when CONDUIT_TEST_PG_URL is
// unset (and CONDUIT_SKIP_PG is not 1), scripts/ci-postgres.sh starts — or installs, as root —
// Debian's PostgreSQL and prints the URL, so `npm test` works on a fresh machine.
import { execFileSync } from "node:child_process";

export default function setup(): void {
  if (process.env.CONDUIT_TEST_PG_URL || process.env.CONDUIT_SKIP_PG === "1") return;
  try {
    const url = execFileSync("bash", ["scripts/ci-postgres.sh"], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 300_000 }).trim();
    if (url) process.env.CONDUIT_TEST_PG_URL = url;
  } catch (err) {
    // the PostgreSQL tests then fail with their own message naming the fix
    console.error(`could not start PostgreSQL for the tests: ${err instanceof Error ? err.message : String(err)}`);
  }
}
