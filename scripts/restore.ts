// `npm run restore -- <dir>`: a backup made by `npm run backup` into an empty data directory,
// workspaces root and database (those npm start would use: CONDUIT_DATA_DIR,
// CONDUIT_WORKSPACES_ROOT, DATABASE_URL from the environment, then .env). Refuses a target that
// is not empty and a backup that does not match its checksums, before writing anything. Start
// Conduit afterwards: npm start applies the migrations a newer Conduit needs. See
// scripts/backup-core.ts and docs/DEPLOY.md, "Backup and restore".
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { findProjectRoot } from "../server/db/database-url";
import { restoreBackup } from "./backup-core";
import { instanceFlags, instancePaths, runCommand } from "./backup";

const usage = `usage: npm run restore -- <dir> [--data-dir DIR] [--workspaces-root DIR] [--database-url URL]
  Restores the backup in <dir> into the data directory, workspaces root and database named by
  CONDUIT_DATA_DIR, CONDUIT_WORKSPACES_ROOT and DATABASE_URL (the environment, then .env); all
  of them must be empty (a PostgreSQL database: created, with no tables). Conduit must not run there.`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: instanceFlags });
  if (values.help || positionals.length !== 1) {
    console.log(usage);
    return values.help ? 0 : 2;
  }
  const root = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));
  return runCommand(async () => {
    const paths = instancePaths(root, values);
    await restoreBackup({ ...paths, from: path.resolve(positionals[0]!), root, log: (line) => console.log(line) });
  });
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
