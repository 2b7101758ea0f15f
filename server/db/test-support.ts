// Helpers for server/db's integration tests: temp directories and the PostgreSQL under test.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "vitest";
import { createDb, type Db } from "./client";
import { findProjectRoot } from "./database-url";
import { deployMigrations, withScratchPgDatabase } from "./migrations";

export const projectRoot = findProjectRoot();

/** A fresh temp directory and its removal. */
export function makeTempDir(prefix = "conduit-db-test-"): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A copy of one of the project's migrations folders, to add migrations to. */
export function copyMigrations(from: string, to: string): string {
  cpSync(path.join(projectRoot, from), to, { recursive: true });
  return to;
}

/**
 * The PostgreSQL server the tests make scratch databases on. PostgreSQL is a supported target, so
 * a missing server fails the tests instead of skipping them silently; set CONDUIT_SKIP_PG=1 to
 * skip them on purpose.
 */
export const pgTests = {
  skip: process.env.CONDUIT_SKIP_PG === "1",
  serverUrl(): string {
    const url = process.env.CONDUIT_TEST_PG_URL;
    if (!url) {
      throw new Error(
        "CONDUIT_TEST_PG_URL is not set. Start PostgreSQL with `export CONDUIT_TEST_PG_URL=$(scripts/ci-postgres.sh)`, " +
          "or set CONDUIT_SKIP_PG=1 to skip the PostgreSQL tests.",
      );
    }
    return url;
  },
};

/** Runs `exercise` on a client of `url` after migrating it, and disconnects. */
async function onMigrated(url: string, exercise: (db: Db) => Promise<void>): Promise<void> {
  await deployMigrations({ url });
  const db = createDb(url);
  try {
    await exercise(db);
  } finally {
    await db.$disconnect();
  }
}

/**
 * One test, run against a database of each provider: a fresh SQLite file, and a scratch
 * PostgreSQL database; `run` gets the database's URL.
 */
export function itOnBothDatabases(subject: string, name: string, run: (url: string) => Promise<void>): void {
  describe(`${subject} on SQLite`, () => {
    it(name, async () => {
      const temp = makeTempDir();
      try {
        await run(`file:${path.join(temp.dir, "conduit.db")}`);
      } finally {
        temp.remove();
      }
    });
  });
  // Skipped only with CONDUIT_SKIP_PG=1, an explicit opt-out: without PostgreSQL and without it,
  // the test fails (pgTests.serverUrl throws), so a missing server is never silently skipped.
  describe.skipIf(pgTests.skip)(`${subject} on PostgreSQL`, () => {
    it(name, async () => {
      await withScratchPgDatabase(pgTests.serverUrl(), run);
    });
  });
}

/** One test on a freshly migrated database of each provider, with a client of it. */
export function itOnBothProviders(subject: string, name: string, exercise: (db: Db) => Promise<void>): void {
  itOnBothDatabases(subject, name, (url) => onMigrated(url, exercise));
}
