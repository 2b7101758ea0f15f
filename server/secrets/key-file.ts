/**
 * A key file in the data directory, made once and never replaced: written whole to a temp file,
 * then linked into place. link() fails if the name exists, so a reader never sees a half-written
 * file and a second writer (another process starting at the same moment) never replaces the
 * first one's key; both then read the one that won.
 */
import { randomBytes } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The text of `file`, made from `make()` (0600, in a 0700 folder) when it does not exist yet. */
export function readOrCreateKeyFile(file: string, make: () => string): string {
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
    writeFileSync(temp, make(), { mode: 0o600, flag: "wx" });
    try {
      linkSync(temp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      unlinkSync(temp);
    }
  }
  return readFileSync(file, "utf8");
}
