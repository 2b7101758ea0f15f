// `npm run backup -- <dir>`: a backup of this instance (the database, the data directory's
// secrets, keys, CLI config and shadow repositories, the workspaces) into a new or empty folder,
// while Conduit runs. Reads the same settings as `npm start` (the environment, then .env):
// CONDUIT_DATA_DIR, CONDUIT_WORKSPACES_ROOT, DATABASE_URL. See scripts/backup-core.ts and
// docs/DEPLOY.md, "Backup and restore".
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { findProjectRoot } from "../server/db/database-url";
import { EnvError, parseEnv } from "../server/env/env";
import { BackupError, createBackup, type InstancePaths } from "./backup-core";
import { resolveStartSettings, withDotEnv } from "./start-settings";

export const backupUsage = `usage: npm run backup -- <dir> [--data-dir DIR] [--workspaces-root DIR] [--database-url URL]
  Backs up the running instance named by CONDUIT_DATA_DIR, CONDUIT_WORKSPACES_ROOT and
  DATABASE_URL (the environment, then .env, as npm start reads them) into <dir> (new or empty).`;

/** The instance's paths as `npm start` resolves them, flags first. */
export function instancePaths(root: string, flags: { "data-dir"?: string; "workspaces-root"?: string; "database-url"?: string }): InstancePaths {
  const environment = withDotEnv(root, process.env);
  if (flags["data-dir"]) environment.CONDUIT_DATA_DIR = flags["data-dir"];
  if (flags["workspaces-root"]) environment.CONDUIT_WORKSPACES_ROOT = flags["workspaces-root"];
  if (flags["database-url"]) environment.DATABASE_URL = flags["database-url"];
  const settings = resolveStartSettings(parseEnv(environment), root);
  return { dataDir: settings.dataDir, workspacesRoot: settings.workspacesRoot, databaseUrl: settings.databaseUrl };
}

export const instanceFlags = {
  "data-dir": { type: "string" },
  "workspaces-root": { type: "string" },
  "database-url": { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} as const;

/** Runs a backup or restore command, printing its error as one line; the exit code. */
export async function runCommand(run: () => Promise<unknown>): Promise<number> {
  try {
    await run();
    return 0;
  } catch (error) {
    if (error instanceof BackupError || error instanceof EnvError) console.error(`error: ${error.message}`);
    else console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    return 1;
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: instanceFlags });
  if (values.help || positionals.length !== 1) {
    console.log(backupUsage);
    return values.help ? 0 : 2;
  }
  const root = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));
  return runCommand(async () => {
    const paths = instancePaths(root, values);
    await createBackup({ ...paths, out: path.resolve(positionals[0]!), root, log: (line) => console.log(line) });
  });
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
