// Makes Redis available to the integration tests that need it: when CONDUIT_TEST_REDIS_URL is
// unset, scripts/ci-redis.sh starts — or installs, as root — Debian's redis-server with a
// password (as Conduit requires of REDIS_URL) and prints its URL, so the cluster tests find it.
import { execFileSync } from "node:child_process";

export default function setup(): void {
  if (process.env.CONDUIT_TEST_REDIS_URL) return;
  try {
    const url = execFileSync("bash", ["scripts/ci-redis.sh"], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 300_000 }).trim();
    if (url) process.env.CONDUIT_TEST_REDIS_URL = url;
  } catch (err) {
    // the Redis tests then fail with their own connection error
    console.error(`could not start Redis for the tests: ${err instanceof Error ? err.message : String(err)}`);
  }
}
