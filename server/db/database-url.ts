// Where Conduit's database lives, decided in one place for the web server, the sidecar, the
// migration script and prisma.config.ts. Pure path logic; no connection is opened here.
import { existsSync } from "node:fs";
import path from "node:path";

/** Used when `DATABASE_URL` is unset: a SQLite file under the project root. */
export const DEFAULT_DATABASE_URL = "file:./data/conduit.db";

/** How long a SQLite writer waits for another process's lock before failing (ms). */
export const SQLITE_BUSY_TIMEOUT_MS = 10_000;

export type DatabaseTarget =
  | { provider: "sqlite"; /** absolute path of the database file */ file: string; url: string }
  | { provider: "postgresql"; url: string };

/**
 * The project root: the nearest directory at or above `from` that holds a package.json.
 * Relative SQLite paths are resolved against it, so `file:./data/conduit.db` means the same file
 * whether the process was started from the root, from `scripts/`, or by vitest.
 */
export function findProjectRoot(from: string = process.cwd()): string {
  let dir = path.resolve(/*turbopackIgnore: true*/ from);
  for (;;) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(/*turbopackIgnore: true*/ from);
    dir = parent;
  }
}

/**
 * Classifies a database URL by scheme: `file:` is SQLite, `postgres://` or `postgresql://` is
 * PostgreSQL. Anything else throws, so a typo fails at startup instead of at the first query.
 */
export function parseDatabaseUrl(url: string, root: string = findProjectRoot()): DatabaseTarget {
  if (url.startsWith("file:")) {
    // Prisma's SQLite URLs may carry options after "?" (e.g. ?connection_limit=1); the file is
    // what comes before it.
    const raw = url.slice("file:".length).split("?")[0] ?? "";
    const withoutSlashes = raw.startsWith("//") ? raw.slice(2) : raw;
    if (withoutSlashes === "" || withoutSlashes === ":memory:") {
      throw new Error(`DATABASE_URL ${url} names no file; an in-memory database cannot be shared`);
    }
    const file = path.resolve(root, withoutSlashes);
    return { provider: "sqlite", file, url: `file:${file}` };
  }
  if (/^postgres(ql)?:\/\//.test(url)) return { provider: "postgresql", url };
  throw new Error(`DATABASE_URL must start with file:, postgres:// or postgresql:// (got ${redactUrl(url)})`);
}

/** The URL with any password replaced by `***`, for logs and error messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@]*@/i, "$1***@");
}
