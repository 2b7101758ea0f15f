// Conduit's database migrations, run with tsx. The Prisma CLI's `migrate` commands need a native
// schema engine that cannot be downloaded here; this drives the WebAssembly one instead (see
// server/db/migrations.ts) and keeps Prisma's folder layout and `_prisma_migrations` table.
//
//   tsx scripts/db-migrate.ts deploy  [--url URL] [--dir DIR]   apply pending migrations
//   tsx scripts/db-migrate.ts status  [--url URL] [--dir DIR]   list applied/pending (exit 1 unless up to date)
//   tsx scripts/db-migrate.ts create <name> [--require-pg] [--pg-url URL]
//   tsx scripts/db-migrate.ts check  [--require-pg] [--pg-url URL]   CI: schema and migrations agree
//   tsx scripts/db-migrate.ts sync-pg [--check]                   regenerate prisma/postgres/schema.prisma
//
// DATABASE_URL picks the database (default file:./data/conduit.db, relative to the project root):
// file: is SQLite, postgres:// or postgresql:// is PostgreSQL. create/check make scratch databases
// on the server at --pg-url, CONDUIT_MIGRATE_PG_URL, CONDUIT_TEST_PG_URL, a postgres DATABASE_URL,
// or postgresql://postgres:postgres@127.0.0.1:5432/postgres, in that order.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { findProjectRoot } from "../server/db/database-url";
import {
  checkMigrations,
  createMigration,
  deployMigrations,
  migrationStatus,
  syncPgSchema,
  MigrationError,
} from "../server/db/migrations";

export {
  checkMigrations,
  createMigration,
  deployMigrations,
  migrationStatus,
  renderPgSchema,
  syncPgSchema,
  MigrationError,
} from "../server/db/migrations";
export type {
  CheckResult,
  CreateOptions,
  CreateResult,
  DeployOptions,
  DeployResult,
  MigrationStatus,
} from "../server/db/migrations";

const USAGE = `usage: tsx scripts/db-migrate.ts <command>
  deploy  [--url URL] [--dir DIR]        apply pending migrations
  status  [--url URL] [--dir DIR]        list applied and pending migrations
  create  <name> [--require-pg] [--pg-url URL]
                                         new migration for SQLite and PostgreSQL
  check   [--require-pg] [--pg-url URL]  fail if the schema has changes without a migration
  sync-pg [--check]                      write prisma/postgres/schema.prisma`;

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      dir: { type: "string" },
      "pg-url": { type: "string" },
      "require-pg": { type: "boolean", default: false },
      check: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const [command, ...rest] = positionals;
  const log = (line: string) => console.log(line);
  const root = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));
  const target = { url: values.url, migrationsDir: values.dir, root };
  const pg = { root, pgUrl: values["pg-url"], requirePg: values["require-pg"], log };

  if (values.help || !command) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  switch (command) {
    case "deploy": {
      await deployMigrations({ ...target, log });
      return 0;
    }
    case "status": {
      const status = await migrationStatus(target);
      console.log(`${status.provider} ${status.url}`);
      for (const m of status.migrations) {
        const when = m.appliedAt ? ` ${m.appliedAt}` : "";
        console.log(`  ${m.state.padEnd(7)} ${m.name}${when}${m.edited ? " (edited since applied)" : ""}`);
      }
      for (const name of status.unknownApplied) console.log(`  applied ${name} (missing from the migrations folder)`);
      if (status.migrations.length === 0) console.log("  no migrations");
      console.log(status.upToDate ? "Database is up to date." : "Database is not up to date.");
      return status.upToDate ? 0 : 1;
    }
    case "create": {
      const name = rest[0];
      if (!name) {
        console.error("create needs a name: tsx scripts/db-migrate.ts create <name>");
        return 2;
      }
      const result = await createMigration({ ...pg, name });
      if (!result.sqlite && !result.postgresql) console.log("no changes");
      return 0;
    }
    case "check": {
      const result = await checkMigrations(pg);
      for (const problem of result.problems) console.error(problem);
      if (result.ok)
        console.log(
          result.pgSkipped
            ? "SQLite migrations match the schema (PostgreSQL skipped)."
            : "Migrations match the schema.",
        );
      return result.ok ? 0 : 1;
    }
    case "sync-pg": {
      const result = syncPgSchema({ root, check: values.check });
      const relative = path.relative(root, result.path);
      if (values.check) {
        console.log(
          result.stale ? `${relative} is stale: run tsx scripts/db-migrate.ts sync-pg` : `${relative} is up to date`,
        );
        return result.stale ? 1 : 0;
      }
      console.log(result.stale ? `wrote ${relative}` : `${relative} already up to date`);
      return 0;
    }
    default:
      console.error(`unknown command ${command}\n${USAGE}`);
      return 2;
  }
}

const invokedDirectly =
  process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const root = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));
  try {
    // Prisma 7 no longer loads .env; the existing environment wins over the file.
    process.loadEnvFile(path.join(root, ".env"));
  } catch {
    // no .env
  }
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      if (error instanceof MigrationError) {
        console.error(error.message);
        if (error.migration)
          console.error(`Nothing of ${error.migration} was kept; migrations before it stay applied.`);
      } else {
        console.error(error instanceof Error ? error.message : error);
      }
      process.exitCode = 1;
    },
  );
}
