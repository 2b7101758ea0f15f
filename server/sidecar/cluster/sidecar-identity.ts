/**
 * This sidecar's id in the cluster: `CONDUIT_SIDECAR_ID` when configured, else an id generated
 * once and kept in `DATA_DIR/sidecar-id`, so a restarted sidecar is the same node (its leases,
 * its children's rows) and two sidecars on one host are never one node by accident, as they
 * were when the host name was the id.
 *
 * Owns: choosing and keeping the id. Must not: touch the database.
 */
import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

const idPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** The id file's name inside the data directory. */
export const sidecarIdFile = "sidecar-id";

/**
 * The configured id, or the kept one (made on first use; two processes starting at once agree,
 * because the file is published with an exclusive link). A kept file that does not hold a valid
 * id is an error, never silently replaced: the id names rows in the database.
 */
export function resolveSidecarId(options: { configured?: string; dataDir: string }): string {
  if (options.configured !== undefined) return options.configured;
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(options.dataDir, sidecarIdFile);
  const kept = readKept(file);
  if (kept !== undefined) return kept;
  const fresh = `sc-${randomBytes(6).toString("hex")}`;
  const draft = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(draft, `${fresh}\n`, { mode: 0o600 });
  try {
    linkSync(draft, file);
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    // another process made it first: its id is the one
    const winner = readKept(file);
    if (winner === undefined) throw new Error(`${file} appeared without an id`);
    return winner;
  } finally {
    unlinkSync(draft);
  }
}

function readKept(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  if (!idPattern.test(text)) throw new Error(`${file} does not hold a sidecar id (1-63 letters, digits, dots, dashes, underscores); remove it or set CONDUIT_SIDECAR_ID`);
  return text;
}
