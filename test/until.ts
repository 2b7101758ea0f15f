/** Polls `check` every `pollMs` until it holds; throws naming `what` after `timeoutMs`. For tests. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
  what = "condition",
  pollMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
