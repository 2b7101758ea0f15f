import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findProjectRoot } from "./database-url";
import {
  migrationTimestamp,
  PG_MIGRATIONS_DIR,
  readMigrations,
  renderPgSchema,
  SQLITE_MIGRATIONS_DIR,
  syncPgSchema,
  withDatabaseName,
} from "./migrations";

const root = findProjectRoot();

describe("renderPgSchema", () => {
  const sqlite = [
    "// models",
    "generator client {",
    '  provider = "prisma-client"',
    '  output   = "../generated/prisma"',
    "}",
    "",
    "datasource db {",
    '  provider = "sqlite"',
    "}",
    "",
    "model A {",
    '  provider String @default("sqlite")',
    "}",
    "",
  ].join("\n");

  it("switches the provider and the client output, and nothing else", () => {
    const pg = renderPgSchema(sqlite);
    expect(pg).toMatch(/^\/\/ GENERATED from prisma\/schema\.prisma .*Do not edit/);
    expect(pg).toContain('datasource db {\n  provider = "postgresql"\n}');
    expect(pg).toContain('  output   = "../../generated/prisma-pg"');
    expect(pg).toContain('  provider = "prisma-client"');
    expect(pg).toContain('provider String @default("sqlite")');
  });

  it("refuses a schema that is not SQLite", () => {
    expect(() => renderPgSchema(sqlite.replace('provider = "sqlite"', 'provider = "mysql"'))).toThrow(
      /provider = "sqlite"/,
    );
  });
});

describe("the project's schema and migrations", () => {
  it("has prisma/postgres/schema.prisma in sync with prisma/schema.prisma", () => {
    expect(syncPgSchema({ root, check: true }).stale).toBe(false);
  });

  it("has the same migration names for both providers, each folder with its lock file", () => {
    const sqlite = readMigrations(path.join(root, SQLITE_MIGRATIONS_DIR));
    const pg = readMigrations(path.join(root, PG_MIGRATIONS_DIR));
    expect(sqlite.migrations.length).toBeGreaterThan(0);
    expect(pg.migrations.map((m) => m.name)).toEqual(sqlite.migrations.map((m) => m.name));
    expect(sqlite.lockfile).toContain('provider = "sqlite"');
    expect(pg.lockfile).toContain('provider = "postgresql"');
  });

  it("stores checksums as Prisma does (sha256 of migration.sql)", () => {
    const [first] = readMigrations(path.join(root, SQLITE_MIGRATIONS_DIR)).migrations;
    const sql = readFileSync(path.join(root, SQLITE_MIGRATIONS_DIR, first!.name, "migration.sql"), "utf8");
    expect(first!.sql).toBe(sql);
    expect(first!.checksum).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("helpers", () => {
  it("formats migration timestamps in UTC", () => {
    expect(migrationTimestamp(new Date("2026-01-02T03:04:05.678Z"))).toBe("20260102030405");
  });

  it("points a server URL at another database, keeping credentials and options", () => {
    expect(withDatabaseName("postgresql://u:p%40ss@h:5433/postgres?sslmode=disable", "scratch_1")).toBe(
      "postgresql://u:p%40ss@h:5433/scratch_1?sslmode=disable",
    );
  });
});
