/**
 * Reads a file the CLI wants to change, for its review card, without letting the file decide
 * how long that takes or how much memory it costs. The path comes from `locateInWorkspace`
 * (real path inside the workspace), but what sits there is the session's choice: a named pipe
 * would block a plain `readFile` forever (and, four at a time, every fs call of the sidecar on
 * libuv's thread pool), a device never ends, a huge file fills memory.
 */
import { constants } from "node:fs";
import { lstat, open } from "node:fs/promises";

/** Largest file shown in a review (and read for a plan); larger ones are refused with a reason. */
export const maxReviewBytes = 4 * 1024 * 1024;

export type ReviewFileRead =
  | { ok: true; text: string }
  | { ok: true; text: null } // the file does not exist (yet): a Write creates it
  | { ok: false; problem: string };

function kindOf(stats: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isSymbolicLink(): boolean;
}): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a named pipe (FIFO)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  if (stats.isSymbolicLink()) return "a symbolic link";
  return "not a regular file";
}

const notRegular = (kind: string) => ({
  ok: false as const,
  problem: `The target is ${kind}, not a regular file; Conduit shows no review for it. Deny unless you expected this.`,
});

const tooLarge = (bytes: number, max: number) => ({
  ok: false as const,
  problem: `The file is too large to review here (${(bytes / 1024 / 1024).toFixed(1)} MB; at most ${(max / 1024 / 1024).toFixed(0)} MB are shown).`,
});

/**
 * The text of a regular file of at most `maxBytes`, `text: null` when nothing is there, or a
 * problem in words for the card. `lstat` first; then the file is opened non-blocking and
 * without following a link, and checked again on the open descriptor (the same inode, still
 * regular), so a swap between the two steps changes nothing.
 */
export async function readReviewFile(filePath: string, maxBytes: number = maxReviewBytes): Promise<ReviewFileRead> {
  let before;
  try {
    before = await lstat(filePath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { ok: true, text: null };
    return { ok: false, problem: "The file cannot be read." };
  }
  if (!before.isFile()) return notRegular(kindOf(before));
  if (before.size > maxBytes) return tooLarge(before.size, maxBytes);

  let handle;
  try {
    handle = await open(filePath, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { ok: true, text: null };
    return { ok: false, problem: "The file cannot be read." };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return notRegular(kindOf(stats));
    if (stats.ino !== before.ino || stats.dev !== before.dev) {
      return {
        ok: false,
        problem: "The file changed while Conduit was reading it; deny and let the session ask again.",
      };
    }
    // Read to the end, but never more than one byte past the cap: a file that grew since the
    // stat is refused, not cut.
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(64 * 1024, maxBytes + 1 - length));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, length);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      length += bytesRead;
      if (length > maxBytes) return tooLarge(length, maxBytes);
    }
    return { ok: true, text: Buffer.concat(chunks, length).toString("utf8") };
  } catch {
    return { ok: false, problem: "The file cannot be read." };
  } finally {
    await handle.close().catch(() => undefined);
  }
}
