import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createMigration,
  deployMigrations,
  MigrationError,
  migrationStatus,
  PG_MIGRATIONS_DIR,
  readMigrations,
  SQLITE_MIGRATIONS_DIR,
  withScratchPgDatabase,
} from "./migrations";
import { copyMigrations, makeTempDir, pgTests, projectRoot } from "./test-support";

const allNames = readMigrations(path.join(projectRoot, SQLITE_MIGRATIONS_DIR)).migrations.map((m) => m.name);
const initName = allNames[0];
const BROKEN = "29991231000000_broken";
/** A valid statement, then an invalid one. */
const BROKEN_SQL = `CREATE TABLE "Extra" ("id" INTEGER NOT NULL PRIMARY KEY);\nALTER TABLE "User" ADD COLUMN "nickname" TEXT;\nTHIS IS NOT SQL;\n`;

function addMigration(dir: string, name: string, sql: string): void {
  mkdirSync(path.join(dir, name), { recursive: true });
  writeFileSync(path.join(dir, name, "migration.sql"), sql);
}

function lines(): { log: (line: string) => void; out: string[] } {
  const out: string[] = [];
  return { log: (line) => out.push(line), out };
}

describe("SQLite migrations", () => {
  let temp: ReturnType<typeof makeTempDir>;
  let url: string;
  let file: string;

  beforeEach(() => {
    temp = makeTempDir();
    // a directory that does not exist yet: deploy creates it
    file = path.join(temp.dir, "data", "conduit.db");
    url = `file:${file}`;
  });
  afterEach(() => temp.remove());

  const inspect = <T>(fn: (db: Database.Database) => T): T => {
    const db = new Database(file, { readonly: true });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  const schemaSql = () =>
    inspect((db) => db.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY type, name").all());
  const migrationRows = () =>
    inspect((db) => db.prepare("SELECT * FROM _prisma_migrations ORDER BY migration_name").all());

  it("applies the init migration and records it in _prisma_migrations", async () => {
    const { log, out } = lines();
    const result = await deployMigrations({ url, log });

    expect(initName).toBeDefined();
    expect(result).toEqual({ provider: "sqlite", applied: allNames, alreadyApplied: [] });
    expect(out).toEqual(allNames.map((name) => `Applied ${name}`));
    const tables = inspect((db) =>
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .all()
        .map((r) => (r as { name: string }).name),
    );
    expect(tables).toEqual(
      expect.arrayContaining(["User", "Workspace", "Session", "SessionEvent", "_prisma_migrations"]),
    );
    const rows = migrationRows() as { migration_name: string; finished_at: string | null; checksum: string }[];
    expect(rows).toHaveLength(allNames.length);
    expect(rows[0]).toMatchObject({ migration_name: initName, logs: null, rolled_back_at: null });
    expect(rows[0]?.finished_at).not.toBeNull();
    expect(inspect((db) => db.pragma("journal_mode", { simple: true }))).toBe("wal");
  });

  it("is a no-op the second time: same _prisma_migrations rows, nothing re-run", async () => {
    await deployMigrations({ url });
    const rowsBefore = migrationRows();
    const schemaBefore = schemaSql();

    const { log, out } = lines();
    const again = await deployMigrations({ url, log });

    expect(again).toEqual({ provider: "sqlite", applied: [], alreadyApplied: allNames });
    expect(out).toEqual([`No pending migrations (${allNames.length} applied)`]);
    expect(migrationRows()).toEqual(rowsBefore);
    expect(schemaSql()).toEqual(schemaBefore);
  });

  it("leaves schema, data and history as they were when a migration fails, and reports which", async () => {
    const dir = copyMigrations(SQLITE_MIGRATIONS_DIR, path.join(temp.dir, "migrations"));
    await deployMigrations({ url, migrationsDir: dir });
    const writer = new Database(file);
    writer.prepare(`INSERT INTO "User" ("id", "email", "name") VALUES ('u1', 'ada@example.com', 'Ada')`).run();
    writer.close();
    const schemaBefore = schemaSql();
    const rowsBefore = migrationRows();

    addMigration(dir, BROKEN, BROKEN_SQL);
    const failure = await deployMigrations({ url, migrationsDir: dir }).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(MigrationError);
    expect((failure as MigrationError).migration).toBe(BROKEN);
    expect((failure as MigrationError).message).toMatch(new RegExp(`^migration ${BROKEN} failed: .*syntax error`));
    expect(schemaSql()).toEqual(schemaBefore);
    expect(migrationRows()).toEqual(rowsBefore);
    expect(inspect((db) => db.prepare(`SELECT * FROM "User"`).all())).toEqual([
      expect.objectContaining({ id: "u1", email: "ada@example.com", name: "Ada" }),
    ]);

    // Nothing to resolve by hand: fix the file and deploy again.
    addMigration(dir, BROKEN, `ALTER TABLE "User" ADD COLUMN "nickname" TEXT;\n`);
    const fixed = await deployMigrations({ url, migrationsDir: dir });
    expect(fixed.applied).toEqual([BROKEN]);
    const status = await migrationStatus({ url, migrationsDir: dir });
    expect(status.upToDate).toBe(true);
  });

  it("keeps child rows when a migration redefines a parent table (no ON DELETE CASCADE on the DROP)", async () => {
    const dir = copyMigrations(SQLITE_MIGRATIONS_DIR, path.join(temp.dir, "migrations"));
    await deployMigrations({ url, migrationsDir: dir });
    const writer = new Database(file);
    writer.exec(`
      INSERT INTO "User" ("id", "email", "name") VALUES ('u1', 'ada@example.com', 'Ada');
      INSERT INTO "Workspace" ("id", "name", "slug", "rootPath") VALUES ('w1', 'W', 'w', '/w');
      INSERT INTO "Membership" ("id", "workspaceId", "userId", "role") VALUES ('m1', 'w1', 'u1', 'owner');`);
    writer.close();

    // The shape Prisma generates when SQLite cannot ALTER a column in place.
    const userSql = (
      inspect((db) => db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'User'`).get()) as { sql: string }
    ).sql;
    addMigration(
      dir,
      "29991231000001_redefine_user",
      [
        "PRAGMA defer_foreign_keys=ON;",
        "PRAGMA foreign_keys=OFF;",
        `${userSql.replace('"User"', '"new_User"')};`,
        `INSERT INTO "new_User" SELECT * FROM "User";`,
        `DROP TABLE "User";`,
        `ALTER TABLE "new_User" RENAME TO "User";`,
        `CREATE UNIQUE INDEX "User_email_key" ON "User"("email");`,
        "PRAGMA foreign_keys=ON;",
        "PRAGMA defer_foreign_keys=OFF;",
        "",
      ].join("\n"),
    );
    await deployMigrations({ url, migrationsDir: dir });

    expect(inspect((db) => db.prepare(`SELECT id FROM "Membership"`).all())).toEqual([{ id: "m1" }]);
  });

  it("rejects a migration that leaves foreign keys dangling", async () => {
    const dir = copyMigrations(SQLITE_MIGRATIONS_DIR, path.join(temp.dir, "migrations"));
    await deployMigrations({ url, migrationsDir: dir });
    addMigration(
      dir,
      "29991231000002_dangling",
      `INSERT INTO "Workspace" ("id", "name", "slug", "rootPath") VALUES ('w1', 'W', 'w', '/w');\n` +
        `INSERT INTO "Membership" ("id", "workspaceId", "userId", "role") VALUES ('m1', 'w1', 'nobody', 'owner');\n`,
    );

    await expect(deployMigrations({ url, migrationsDir: dir })).rejects.toThrow(/foreign key violations.*Membership/);
    expect(inspect((db) => db.prepare(`SELECT count(*) AS n FROM "Workspace"`).get())).toEqual({ n: 0 });
  });

  it("reports status without creating the database file", async () => {
    const before = await migrationStatus({ url });
    expect(before).toMatchObject({ provider: "sqlite", upToDate: false, unknownApplied: [] });
    expect(before.migrations).toEqual(
      allNames.map((name) => ({ name, state: "pending", appliedAt: null, edited: false })),
    );

    await deployMigrations({ url });
    const after = await migrationStatus({ url });
    expect(after.upToDate).toBe(true);
    expect(after.migrations[0]).toMatchObject({ name: initName, state: "applied", edited: false });
  });

  it("creates a SQLite migration for a schema change, and none when nothing changed", async () => {
    const root = temp.dir;
    writeFileSync(path.join(root, "package.json"), "{}\n");
    mkdirSync(path.join(root, "prisma"));
    copyMigrations(SQLITE_MIGRATIONS_DIR, path.join(root, SQLITE_MIGRATIONS_DIR));
    const schema = readFileSync(path.join(projectRoot, "prisma/schema.prisma"), "utf8");
    writeFileSync(path.join(root, "prisma/schema.prisma"), schema);
    // Nothing listens on port 1: PostgreSQL is skipped (and said so) rather than required.
    const offline = { root, pgUrl: "postgresql://postgres:x@127.0.0.1:1/postgres" };

    const { log, out } = lines();
    const unchanged = await createMigration({ ...offline, name: "noop", log });
    expect(unchanged).toMatchObject({ sqlite: null, postgresql: null });
    expect(unchanged.pgSkipped).toMatch(/no PostgreSQL reachable/);
    expect(out).toContain("SQLite: no changes");

    writeFileSync(
      path.join(root, "prisma/schema.prisma"),
      schema.replace("  isAdmin          Boolean", "  nickname         String?\n  isAdmin          Boolean"),
    );
    const created = await createMigration({ ...offline, name: "Add nickname!", now: new Date("2030-01-02T03:04:05Z") });
    expect(created.sqlite?.name).toBe("20300102030405_add_nickname");
    expect(readFileSync(created.sqlite!.file, "utf8")).toMatch(/ALTER TABLE "User" ADD COLUMN "nickname" TEXT/);
    await expect(createMigration({ ...offline, name: "x", requirePg: true })).rejects.toThrow(
      /no PostgreSQL reachable/,
    );
  });
});

// Skipped only with CONDUIT_SKIP_PG=1, an explicit opt-out; without PostgreSQL and without it, the suite fails.
describe.skipIf(pgTests.skip)("PostgreSQL migrations", () => {
  let serverUrl: string;
  beforeAll(() => {
    serverUrl = pgTests.serverUrl();
  });

  async function inspect<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  }
  const migrationRows = (url: string) =>
    inspect(url, async (c) => (await c.query("SELECT * FROM _prisma_migrations ORDER BY migration_name")).rows);
  const tables = (url: string) =>
    inspect(url, async (c) =>
      (
        await c.query(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
        )
      ).rows.map((r: { table_name: string }) => r.table_name),
    );

  it("applies the init migration once; the second deploy is a no-op", async () => {
    await withScratchPgDatabase(serverUrl, async (url) => {
      const first = await deployMigrations({ url });
      expect(first).toEqual({ provider: "postgresql", applied: allNames, alreadyApplied: [] });
      expect(await tables(url)).toEqual(expect.arrayContaining(["User", "Session", "_prisma_migrations"]));
      const rowsBefore = await migrationRows(url);
      expect(rowsBefore).toHaveLength(allNames.length);

      const { log, out } = lines();
      const second = await deployMigrations({ url, log });
      expect(second).toEqual({ provider: "postgresql", applied: [], alreadyApplied: allNames });
      expect(out).toEqual([`No pending migrations (${allNames.length} applied)`]);
      expect(await migrationRows(url)).toEqual(rowsBefore);
      expect((await migrationStatus({ url })).upToDate).toBe(true);
    });
  });

  it("leaves the database as it was when a migration fails", async () => {
    const temp = makeTempDir();
    try {
      const dir = copyMigrations(PG_MIGRATIONS_DIR, path.join(temp.dir, "migrations"));
      await withScratchPgDatabase(serverUrl, async (url) => {
        await deployMigrations({ url, migrationsDir: dir });
        await inspect(url, (c) =>
          c.query(`INSERT INTO "User" ("id", "email", "name") VALUES ('u1', 'ada@example.com', 'Ada')`),
        );
        const tablesBefore = await tables(url);
        const rowsBefore = await migrationRows(url);

        addMigration(dir, BROKEN, BROKEN_SQL);
        const failure = await deployMigrations({ url, migrationsDir: dir }).catch((error: unknown) => error);

        expect(failure).toBeInstanceOf(MigrationError);
        expect((failure as MigrationError).message).toMatch(new RegExp(`^migration ${BROKEN} failed: syntax error`));
        expect(await tables(url)).toEqual(tablesBefore);
        expect(await migrationRows(url)).toEqual(rowsBefore);
        const users = await inspect(url, async (c) => (await c.query(`SELECT * FROM "User"`)).rows);
        expect(users).toEqual([expect.objectContaining({ id: "u1", name: "Ada" })]);
        expect(users[0]).not.toHaveProperty("nickname");
      });
    } finally {
      temp.remove();
    }
  });

  it("has migrations that match the schema (create reports no changes)", async () => {
    const temp = makeTempDir();
    try {
      // A throwaway root, so nothing is written into the project even if the check fails.
      const root = temp.dir;
      writeFileSync(path.join(root, "package.json"), "{}\n");
      copyMigrations("prisma", path.join(root, "prisma"));
      const result = await createMigration({ root, name: "check", pgUrl: serverUrl, requirePg: true });
      expect(result).toEqual({ sqlite: null, postgresql: null, pgSkipped: null });
    } finally {
      temp.remove();
    }
  });
});
