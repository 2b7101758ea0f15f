/**
 * Git for a test's own setup (making a repository, committing its first files): the operator's
 * global and system config are ignored, the author is "Setup", the first branch is `main`.
 */
import { execFileSync } from "node:child_process";

/** Runs `git args…` in `cwd` and returns its standard output. Throws on a non-zero exit. */
export function setupGit(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Setup", "-c", "user.email=setup@example.test", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  });
}
