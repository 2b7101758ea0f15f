/** Limits of the git operations that callers check on their side too (pure, no I/O). */

/** Most files one commit through Conduit may select. */
export const maxCommitPaths = 1_000;
