/**
 * Backup and restore of a Conduit instance (`npm run backup -- <dir>`, `npm run restore -- <dir>`;
 * docs/DEPLOY.md, "Backup and restore"). An operator's tool, run as the operator while Conduit
 * runs (backup) or before it starts (restore).
 *
 * A backup is a directory:
 *
 *   manifest.json     what, from where, versions, sizes, what was skipped (format below)
 *   files.jsonl       one line per directory, file and link of `data/` and `workspaces/`
 *   SHA256SUMS        sha256 of every file of the backup (`sha256sum -c SHA256SUMS` checks it too)
 *   database/         conduit.db (SQLite's online backup API) or conduit.pgdump (pg_dump -Fc)
 *   data/             the data directory: generated secrets and keys, claude-config/<workspace>
 *                     (the CLI's transcripts, needed to --resume), shadow/<workspace>; without the
 *                     database files, the workspaces root and the runtime folder run/
 *   workspaces/       CONDUIT_WORKSPACES_ROOT
 *
 * Files are copied while sessions write them. Nothing is followed: a link is recorded as a link
 * (never opened), FIFOs, sockets and devices are skipped and listed, a file is opened with
 * O_NOFOLLOW | O_NONBLOCK and kept only when the opened file is the regular file found by lstat at
 * the path expected (a folder swapped for a link on the way is refused). Each file's checksum is
 * computed from the bytes written to the backup, so it matches the copy even when the source
 * changed meanwhile. In a git folder (a workspace's .git, a shadow repository) the objects are
 * copied after the refs, so every ref kept names objects that are there; git's lock files are
 * skipped.
 */
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { constants, existsSync, readFileSync, statSync } from "node:fs";
import {
  chmod,
  lstat,
  mkdir,
  open,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  symlink,
  utimes,
  writeFile,
  type FileHandle,
} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { parseDatabaseUrl, redactUrl, type DatabaseTarget } from "../server/db/database-url";

export const backupFormat = "conduit-backup";
export const backupFormatVersion = 1;

export type Part = "data" | "workspaces";

export type Entry =
  | { part: Part; path: string; type: "dir"; mode: number; mtimeMs: number }
  | { part: Part; path: string; type: "file"; mode: number; mtimeMs: number; size: number; sha256: string }
  | { part: Part; path: string; type: "symlink"; target: string };

export interface Skipped {
  part: Part;
  path: string;
  reason: string;
}

export interface PartTotals {
  root: string;
  dirs: number;
  files: number;
  symlinks: number;
  bytes: number;
  skipped: number;
}

export interface Manifest {
  format: typeof backupFormat;
  formatVersion: number;
  startedAt: string;
  finishedAt: string;
  host: string;
  versions: { conduit: string; commit: string | null; node: string; claudeCli: string | null; database: string | null };
  /** The real paths; `workspacesRootAsSet`: CONDUIT_WORKSPACES_ROOT as configured (the database's paths start with it). */
  source: { dataDir: string; workspacesRoot: string; workspacesRootAsSet?: string; database: string };
  database: {
    provider: "sqlite" | "postgresql";
    file: string;
    size: number;
    sha256: string;
    /** Migrations applied to the database, oldest first (its schema's version). */
    migrations: string[];
  };
  parts: Record<Part, PartTotals>;
  /** Left out on purpose (the database's own files, the runtime folder, the workspaces root inside the data directory). */
  excluded: { part: Part; path: string; reason: string }[];
  /** Not copied: special files, git lock files, files gone or changed into something else during the copy. */
  skipped: Skipped[];
  /** What the operator should know (secrets kept outside the data directory, workspaces outside the root). */
  notes: string[];
}

export interface InstancePaths {
  dataDir: string;
  workspacesRoot: string;
  databaseUrl: string;
}

export type Log = (line: string) => void;

export class BackupError extends Error {}

const indexFile = "files.jsonl";
const sumsFile = "SHA256SUMS";
const manifestFile = "manifest.json";

// ---------------------------------------------------------------------------------------------
// small helpers

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A progress line at most every `everyMs` (and always when forced). */
function ticker(log: Log, everyMs = 2_000): (line: () => string, force?: boolean) => void {
  let last = Date.now();
  return (line, force = false) => {
    const now = Date.now();
    if (!force && now - last < everyMs) return;
    last = now;
    log(line());
  };
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** A directory that does not exist or holds nothing. */
async function isEmptyOrMissing(dir: string): Promise<boolean> {
  const info = await lstat(dir).catch(() => undefined);
  if (!info) return true;
  if (!info.isDirectory()) return false;
  return (await readdir(dir)).length === 0;
}

function packageVersion(root: string, file: string): string | null {
  try {
    return (JSON.parse(readFileSync(path.join(root, file), "utf8")) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

function gitCommit(root: string): string | null {
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim() || null;
  } catch {
    return null;
  }
}

/** A relative path of the backup's index: POSIX, no `..`, not absolute, no empty parts. */
function safeRelative(p: string): boolean {
  if (p === "" || p.startsWith("/") || p.includes("\0") || p.includes("\\")) return false;
  return p.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL tools

/** pg_dump / pg_restore / psql: on PATH, else the newest of Debian's /usr/lib/postgresql/<v>/bin. */
export function findPgTool(name: "pg_dump" | "pg_restore"): string {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  const base = "/usr/lib/postgresql";
  try {
    const versions = execFileSync("ls", [base], { encoding: "utf8" }).split("\n").filter((v) => /^\d+$/.test(v));
    versions.sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(path.join(base, v, "bin", name))) return path.join(base, v, "bin", name);
  } catch {
    // no Debian layout
  }
  throw new BackupError(`${name} was not found on PATH: install PostgreSQL's client tools (Debian: postgresql-client) of the server's version or newer`);
}

/** libpq's view of a Prisma URL: the password moved to PGPASSWORD (never on a command line), Prisma-only options dropped. */
function libpqConnection(url: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const parsed = new URL(url);
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (parsed.password) env.PGPASSWORD = decodeURIComponent(parsed.password);
  parsed.password = "";
  for (const key of ["schema", "connection_limit", "pool_timeout", "pgbouncer", "statement_cache_size", "socket_timeout", "sslaccept"]) {
    parsed.searchParams.delete(key);
  }
  return { dbname: parsed.toString(), env };
}

function runTool(command: string, args: string[], env: NodeJS.ProcessEnv, log: Log, label: string, watch?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const tick = ticker(log);
    const timer = setInterval(() => {
      tick(() => {
        let size = "";
        try {
          if (watch) size = `, ${mb(statSync(watch).size)} so far`;
        } catch {
          // not written yet
        }
        return `${label}: running${size}`;
      });
    }, 1_000);
    child.on("error", (error) => {
      clearInterval(timer);
      reject(new BackupError(`${label}: ${error.message}`));
    });
    child.on("close", (code) => {
      clearInterval(timer);
      if (code === 0) resolve();
      else reject(new BackupError(`${label} failed (exit ${code}): ${stderr.trim()}`));
    });
  });
}

async function pgQuery<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function appliedMigrationsPg(url: string): Promise<string[]> {
  return pgQuery(url, async (client) => {
    const exists = (await client.query<{ name: string | null }>("SELECT to_regclass('_prisma_migrations')::text AS name")).rows[0]?.name;
    if (!exists) return [];
    const rows = await client.query<{ migration_name: string }>(
      "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name",
    );
    return rows.rows.map((r) => r.migration_name);
  });
}

// ---------------------------------------------------------------------------------------------
// copying a tree without following anything

interface WalkContext {
  part: Part;
  /** The part's root, real path. */
  root: string;
  /** Where the copies go (the backup's `data/` or `workspaces/`). */
  dest: string;
  /** Relative paths (POSIX) left out, with why. */
  exclude: Map<string, string>;
  entries: Entry[];
  skipped: Skipped[];
  excluded: Manifest["excluded"];
  totals: PartTotals;
  tick: (line: () => string, force?: boolean) => void;
}

const procFd = existsSync("/proc/self/fd");

function isGitLock(rel: string): boolean {
  if (!rel.endsWith(".lock")) return false;
  return rel.split("/").slice(0, -1).some((part) => part === ".git" || part.endsWith(".git"));
}

/** Child names in the order they are copied: in a git folder, `objects` after everything else. */
function copyOrder(names: string[]): string[] {
  const sorted = [...names].sort();
  if (!(sorted.includes("objects") && sorted.includes("HEAD"))) return sorted;
  return [...sorted.filter((n) => n !== "objects"), "objects"];
}

async function copyRegularFile(ctx: WalkContext, rel: string, source: string, expected: { dev: number; ino: number }): Promise<Entry | string> {
  let handle: FileHandle;
  try {
    handle = await open(source, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? "gone during the backup" : code === "ELOOP" ? "became a link during the backup" : `not readable (${code})`;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return "not a regular file when opened";
    if (info.dev !== expected.dev || info.ino !== expected.ino) return "replaced during the backup";
    if (procFd) {
      const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => "");
      if (opened !== path.join(ctx.root, rel)) return "reached through a link on the way (path changed during the backup)";
    }
    const target = path.join(ctx.dest, rel);
    const out = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    const hash = createHash("sha256");
    let size = 0;
    try {
      const buffer = Buffer.allocUnsafe(1024 * 1024);
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
        if (bytesRead === 0) break;
        const chunk = buffer.subarray(0, bytesRead);
        hash.update(chunk);
        await out.write(chunk);
        size += bytesRead;
        ctx.totals.bytes += bytesRead;
      }
      await out.chmod(info.mode & 0o777);
    } finally {
      await out.close();
    }
    await utimes(target, info.atime, info.mtime).catch(() => undefined);
    return { part: ctx.part, path: rel, type: "file", mode: info.mode & 0o7777, mtimeMs: Math.trunc(info.mtimeMs), size, sha256: hash.digest("hex") };
  } finally {
    await handle.close();
  }
}

async function walk(ctx: WalkContext, rel: string): Promise<void> {
  const dir = rel === "" ? ctx.root : path.join(ctx.root, rel);
  // the folder must still be the folder at its own path (not a link swapped in since it was listed)
  if ((await realpath(dir).catch(() => "")) !== dir) {
    ctx.skipped.push({ part: ctx.part, path: rel || ".", reason: "folder moved or replaced by a link during the backup" });
    return;
  }
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    ctx.skipped.push({ part: ctx.part, path: rel || ".", reason: `folder not readable (${(error as NodeJS.ErrnoException).code})` });
    return;
  }
  for (const name of copyOrder(names)) {
    const childRel = rel === "" ? name : `${rel}/${name}`;
    const why = ctx.exclude.get(childRel);
    if (why) {
      ctx.excluded.push({ part: ctx.part, path: childRel, reason: why });
      continue;
    }
    const source = path.join(dir, name);
    const info = await lstat(source).catch(() => undefined);
    ctx.tick(() => `${ctx.part}: ${ctx.totals.files} files, ${mb(ctx.totals.bytes)} so far`);
    if (!info) {
      ctx.skipped.push({ part: ctx.part, path: childRel, reason: "gone during the backup" });
    } else if (info.isSymbolicLink()) {
      const target = await readlink(source).catch(() => undefined);
      if (target === undefined) {
        ctx.skipped.push({ part: ctx.part, path: childRel, reason: "gone during the backup" });
        continue;
      }
      await symlink(target, path.join(ctx.dest, childRel));
      ctx.entries.push({ part: ctx.part, path: childRel, type: "symlink", target });
      ctx.totals.symlinks++;
    } else if (info.isDirectory()) {
      await mkdir(path.join(ctx.dest, childRel), { mode: 0o700 });
      ctx.entries.push({ part: ctx.part, path: childRel, type: "dir", mode: info.mode & 0o7777, mtimeMs: Math.trunc(info.mtimeMs) });
      ctx.totals.dirs++;
      await walk(ctx, childRel);
    } else if (info.isFile()) {
      if (isGitLock(childRel)) {
        ctx.skipped.push({ part: ctx.part, path: childRel, reason: "git lock file (a git command was running)" });
        continue;
      }
      const copied = await copyRegularFile(ctx, childRel, source, { dev: info.dev, ino: info.ino });
      if (typeof copied === "string") ctx.skipped.push({ part: ctx.part, path: childRel, reason: copied });
      else {
        ctx.entries.push(copied);
        ctx.totals.files++;
      }
    } else {
      const kind = info.isFIFO() ? "FIFO" : info.isSocket() ? "socket" : info.isCharacterDevice() || info.isBlockDevice() ? "device" : "special file";
      ctx.skipped.push({ part: ctx.part, path: childRel, reason: `${kind}: not copied` });
    }
  }
  ctx.totals.skipped = ctx.skipped.filter((s) => s.part === ctx.part).length;
}

// ---------------------------------------------------------------------------------------------
// backup

export interface BackupOptions extends InstancePaths {
  out: string;
  /** The Conduit checkout (versions). */
  root: string;
  log?: Log;
}

async function sha256File(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const buffer = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      size += bytesRead;
    }
  } finally {
    await handle.close();
  }
  return { sha256: hash.digest("hex"), size };
}

async function backupSqlite(file: string, dest: string, log: Log): Promise<{ migrations: string[]; version: string; workspaceRoots: string[] }> {
  if (!existsSync(file)) throw new BackupError(`the SQLite database ${file} does not exist (is DATABASE_URL / CONDUIT_DATA_DIR the running instance's?)`);
  const source = new Database(file, { readonly: true, fileMustExist: true, timeout: 10_000 });
  const tick = ticker(log);
  try {
    // SQLite's online backup: a consistent copy while Conduit writes (it restarts a step that a write overtook)
    await source.backup(dest, {
      progress({ totalPages, remainingPages }) {
        tick(() => `database: ${totalPages === 0 ? 100 : Math.round(((totalPages - remainingPages) / totalPages) * 100)}% of ${totalPages} pages`);
        return 1024;
      },
    });
  } finally {
    source.close();
  }
  const copy = new Database(dest);
  try {
    copy.pragma("journal_mode = DELETE"); // one self-contained file
    const check = copy.pragma("quick_check", { simple: true });
    if (check !== "ok") throw new BackupError(`the database copy fails SQLite's quick_check: ${String(check)}`);
    const hasMigrations = copy.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '_prisma_migrations'").get();
    const migrations = hasMigrations
      ? (copy
          .prepare("SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name")
          .all() as { migration_name: string }[]).map((r) => r.migration_name)
      : [];
    const hasWorkspaces = copy.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'Workspace'").get();
    const workspaceRoots = hasWorkspaces ? (copy.prepare('SELECT "rootPath" FROM "Workspace"').all() as { rootPath: string }[]).map((r) => r.rootPath) : [];
    const version = `SQLite ${(copy.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v}`;
    return { migrations, version, workspaceRoots };
  } finally {
    copy.close();
  }
}

async function backupPostgres(url: string, dest: string, log: Log): Promise<{ migrations: string[]; version: string; workspaceRoots: string[] }> {
  const pgDump = findPgTool("pg_dump");
  const { dbname, env } = libpqConnection(url);
  log(`database: pg_dump (${pgDump}) of ${redactUrl(url)}`);
  // one snapshot of the whole database (pg_dump runs in a repeatable-read transaction)
  await runTool(pgDump, ["--format=custom", "--no-owner", "--no-privileges", `--file=${dest}`, `--dbname=${dbname}`], env, log, "database: pg_dump", dest);
  const migrations = await appliedMigrationsPg(url);
  const { version, workspaceRoots } = await pgQuery(url, async (client) => {
    const v = (await client.query<{ server_version: string }>("SHOW server_version")).rows[0]?.server_version ?? "?";
    const has = (await client.query<{ name: string | null }>(`SELECT to_regclass('"Workspace"')::text AS name`)).rows[0]?.name;
    const roots = has ? (await client.query<{ rootPath: string }>('SELECT "rootPath" FROM "Workspace"')).rows.map((r) => r.rootPath) : [];
    return { version: `PostgreSQL ${v}`, workspaceRoots: roots };
  });
  return { migrations, version, workspaceRoots };
}

/** Makes a backup of a running instance into `out` (missing or empty). */
export async function createBackup(options: BackupOptions): Promise<Manifest> {
  const log = options.log ?? (() => undefined);
  const startedAt = new Date().toISOString();
  const dataDir = await realpath(path.resolve(options.dataDir)).catch(() => {
    throw new BackupError(`the data directory ${options.dataDir} does not exist`);
  });
  const workspacesRoot = await realpath(path.resolve(options.workspacesRoot)).catch(() => path.resolve(options.workspacesRoot));
  const database: DatabaseTarget = parseDatabaseUrl(options.databaseUrl, options.root);
  const out = path.resolve(options.out);
  if (!(await isEmptyOrMissing(out))) throw new BackupError(`${out} is not empty: give a new or empty folder for the backup`);
  await mkdir(out, { recursive: true, mode: 0o700 });
  const outReal = await realpath(out);
  if (isInside(outReal, dataDir) || isInside(outReal, workspacesRoot))
    throw new BackupError(`${out} is inside the data directory or the workspaces root: put the backup elsewhere`);
  await chmod(outReal, 0o700); // it holds the instance's secrets
  for (const sub of ["database", "data", "workspaces"]) await mkdir(path.join(outReal, sub), { mode: 0o700 });

  log(`backup of ${dataDir} (workspaces ${workspacesRoot}) into ${outReal}`);

  // 1. the database first: the files copied after it are at least as new as what it records
  const dbFile = database.provider === "sqlite" ? "database/conduit.db" : "database/conduit.pgdump";
  if (database.provider === "sqlite") log(`database: SQLite online backup of ${database.file}`);
  const db =
    database.provider === "sqlite"
      ? await backupSqlite(database.file, path.join(outReal, dbFile), log)
      : await backupPostgres(database.url, path.join(outReal, dbFile), log);
  await chmod(path.join(outReal, dbFile), 0o600);
  const dbSum = await sha256File(path.join(outReal, dbFile));
  log(`database: done, ${mb(dbSum.size)}, ${db.migrations.length} migrations applied (${db.migrations.at(-1) ?? "none"})`);

  // 2. the data directory, 3. the workspaces
  const entries: Entry[] = [];
  const skipped: Skipped[] = [];
  const excluded: Manifest["excluded"] = [];
  const dataExclude = new Map<string, string>([
    ["run", "runtime files of running sessions (made again at start)"],
    ["sandbox-status.json", "written again at every start"],
  ]);
  if (database.provider === "sqlite" && isInside(database.file, dataDir)) {
    const rel = path.relative(dataDir, database.file).split(path.sep).join("/");
    for (const suffix of ["", "-wal", "-shm", "-journal"]) dataExclude.set(`${rel}${suffix}`, "the database (in database/)");
  }
  if (isInside(workspacesRoot, dataDir) && workspacesRoot !== dataDir)
    dataExclude.set(path.relative(dataDir, workspacesRoot).split(path.sep).join("/"), "the workspaces root (in workspaces/)");
  const workspacesExclude = new Map<string, string>();
  if (isInside(dataDir, workspacesRoot) && workspacesRoot !== dataDir)
    workspacesExclude.set(path.relative(workspacesRoot, dataDir).split(path.sep).join("/"), "the data directory (in data/)");

  const parts = {} as Record<Part, PartTotals>;
  for (const [part, root, exclude] of [
    ["data", dataDir, dataExclude],
    ["workspaces", workspacesRoot, workspacesExclude],
  ] as const) {
    const totals: PartTotals = { root, dirs: 0, files: 0, symlinks: 0, bytes: 0, skipped: 0 };
    parts[part] = totals;
    if (!existsSync(root)) {
      log(`${part}: ${root} does not exist; nothing to copy`);
      continue;
    }
    log(`${part}: copying ${root}`);
    const ctx: WalkContext = { part, root, dest: path.join(outReal, part), exclude, entries, skipped, excluded, totals, tick: ticker(log) };
    await walk(ctx, "");
    log(`${part}: done, ${totals.files} files, ${totals.dirs} folders, ${totals.symlinks} links, ${mb(totals.bytes)}, ${totals.skipped} skipped`);
  }

  const notes: string[] = [];
  if (!existsSync(path.join(dataDir, ".auth-secret")))
    notes.push("No DATA_DIR/.auth-secret: NEXTAUTH_SECRET is set in the environment or .env and is not in this backup; keep it with the configuration.");
  notes.push("The configuration (.env, the environment) is not in the backup: keep it with your deployment's own records.");
  const outside = db.workspaceRoots.filter((r) => !isInside(r, workspacesRoot) && !isInside(r, options.workspacesRoot));
  for (const r of outside) notes.push(`The workspace at ${r} is outside the workspaces root: its files are not in this backup.`);
  for (const n of notes) log(`note: ${n}`);

  const manifest: Manifest = {
    format: backupFormat,
    formatVersion: backupFormatVersion,
    startedAt,
    finishedAt: new Date().toISOString(),
    host: os.hostname(),
    versions: {
      conduit: packageVersion(options.root, "package.json") ?? "unknown",
      commit: gitCommit(options.root),
      node: process.version,
      claudeCli: packageVersion(options.root, "node_modules/@anthropic-ai/claude-code/package.json"),
      database: db.version,
    },
    source: { dataDir, workspacesRoot, workspacesRootAsSet: path.resolve(options.workspacesRoot), database: database.provider === "sqlite" ? database.file : redactUrl(database.url) },
    database: { provider: database.provider, file: dbFile, size: dbSum.size, sha256: dbSum.sha256, migrations: db.migrations },
    parts,
    excluded,
    skipped,
    notes,
  };
  await writeFile(path.join(outReal, indexFile), entries.map((e) => JSON.stringify(e)).join("\n") + (entries.length ? "\n" : ""), { mode: 0o600 });
  await writeFile(path.join(outReal, manifestFile), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  const sums: string[] = [`${dbSum.sha256}  ${dbFile}`];
  for (const e of entries) if (e.type === "file") sums.push(`${e.sha256}  ${e.part}/${e.path}`);
  for (const f of [indexFile, manifestFile]) sums.push(`${(await sha256File(path.join(outReal, f))).sha256}  ${f}`);
  await writeFile(path.join(outReal, sumsFile), `${sums.join("\n")}\n`, { mode: 0o600 });
  if (skipped.length) log(`skipped ${skipped.length} (listed in manifest.json): ${skipped.slice(0, 3).map((s) => `${s.part}/${s.path} (${s.reason})`).join("; ")}${skipped.length > 3 ? "; …" : ""}`);
  log(`backup complete: ${outReal} (${parts.data.files + parts.workspaces.files} files, ${mb(dbSum.size + parts.data.bytes + parts.workspaces.bytes)})`);
  return manifest;
}

// ---------------------------------------------------------------------------------------------
// verify

export interface VerifiedBackup {
  dir: string;
  manifest: Manifest;
  entries: Entry[];
}

/** Reads and checks a backup: every checksum of SHA256SUMS, and the index against it. Throws on any mismatch. */
export async function verifyBackup(dir: string, log: Log = () => undefined): Promise<VerifiedBackup> {
  const root = path.resolve(dir);
  const sumsText = await readFile(path.join(root, sumsFile), "utf8").catch(() => {
    throw new BackupError(`${root} is not a Conduit backup: no ${sumsFile}`);
  });
  const sums = new Map<string, string>();
  for (const line of sumsText.split("\n")) {
    if (!line) continue;
    const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
    if (!match || !safeRelative(match[2]!)) throw new BackupError(`${sumsFile}: a malformed line (${line.slice(0, 80)})`);
    sums.set(match[2]!, match[1]!);
  }
  for (const required of [manifestFile, indexFile]) if (!sums.has(required)) throw new BackupError(`${sumsFile} does not list ${required}`);

  let total = 0;
  for (const file of sums.keys()) total += (await lstat(path.join(root, file)).catch(() => undefined))?.size ?? 0;
  log(`verifying ${sums.size} checksums (${mb(total)})`);
  const tick = ticker(log);
  const bad: string[] = [];
  let done = 0;
  let bytes = 0;
  for (const [file, expected] of sums) {
    const full = path.join(root, file);
    const info = await lstat(full).catch(() => undefined);
    if (!info?.isFile()) bad.push(`${file} (missing)`);
    else {
      const actual = await sha256File(full);
      if (actual.sha256 !== expected) bad.push(`${file} (checksum differs)`);
      bytes += actual.size;
    }
    done++;
    tick(() => `verifying: ${done}/${sums.size} files, ${mb(bytes)}`);
  }
  if (bad.length)
    throw new BackupError(
      `the backup does not match its checksums, refusing to restore: ${bad.slice(0, 5).join(", ")}${bad.length > 5 ? ` and ${bad.length - 5} more` : ""}`,
    );

  const manifest = JSON.parse(await readFile(path.join(root, manifestFile), "utf8")) as Manifest;
  if (manifest.format !== backupFormat) throw new BackupError(`${manifestFile} is not a Conduit backup's`);
  if (manifest.formatVersion > backupFormatVersion)
    throw new BackupError(`the backup's format ${manifest.formatVersion} is newer than this Conduit reads (${backupFormatVersion}): restore with a newer Conduit`);
  if (!safeRelative(manifest.database.file) || sums.get(manifest.database.file) !== manifest.database.sha256)
    throw new BackupError("the database file of the manifest does not match SHA256SUMS");
  const entries = (await readFile(path.join(root, indexFile), "utf8"))
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Entry);
  for (const e of entries) {
    if ((e.part !== "data" && e.part !== "workspaces") || !safeRelative(e.path)) throw new BackupError(`${indexFile}: a bad path (${JSON.stringify(e.path)})`);
    if (e.type === "file" && sums.get(`${e.part}/${e.path}`) !== e.sha256) throw new BackupError(`${indexFile}: ${e.part}/${e.path} does not match SHA256SUMS`);
  }
  log(`verified: ${sums.size} files match their checksums`);
  return { dir: root, manifest, entries };
}

// ---------------------------------------------------------------------------------------------
// restore

export interface RestoreOptions extends InstancePaths {
  from: string;
  root: string;
  log?: Log;
}

export interface RestoreResult {
  manifest: Manifest;
  /** Old → new paths written into the database when the workspaces root moved. */
  remapped: { from: string; to: string }[];
  notes: string[];
}

/** Why a PostgreSQL database is not empty, or null. */
async function pgNotEmpty(url: string): Promise<string | null> {
  const count = await pgQuery(url, async (client) =>
    Number(
      (
        await client.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'`,
        )
      ).rows[0]?.n ?? 0,
    ),
  ).catch((error: unknown) => {
    throw new BackupError(`cannot reach the PostgreSQL database ${redactUrl(url)}: ${error instanceof Error ? error.message : String(error)}`);
  });
  return count > 0 ? `the PostgreSQL database ${redactUrl(url)} is not empty (${count} relations): restore into a new, empty database` : null;
}

/** The CLI's project folder name of a working directory (`projects/<cwd, non-alphanumerics as "-">`). */
export function cliProjectDirName(cwd: string): string {
  return cwd.replace(/[^a-zA-Z0-9]/g, "-");
}

async function copyOut(source: string, target: string, entry: Extract<Entry, { type: "file" }>): Promise<void> {
  const input = await open(source, constants.O_RDONLY | constants.O_NOFOLLOW);
  const output = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  const hash = createHash("sha256");
  try {
    const buffer = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const { bytesRead } = await input.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      await output.write(buffer.subarray(0, bytesRead));
    }
    await output.chmod(entry.mode & 0o7777);
  } finally {
    await input.close();
    await output.close();
  }
  if (hash.digest("hex") !== entry.sha256) throw new BackupError(`${entry.part}/${entry.path} changed in the backup while it was restored`);
  const mtime = new Date(entry.mtimeMs);
  await utimes(target, mtime, mtime).catch(() => undefined);
}

/** Restores a backup into an empty data directory, workspaces root and database. */
export async function restoreBackup(options: RestoreOptions): Promise<RestoreResult> {
  const log = options.log ?? (() => undefined);
  const dataDir = path.resolve(options.dataDir);
  const workspacesRoot = path.resolve(options.workspacesRoot);
  const database = parseDatabaseUrl(options.databaseUrl, options.root);

  // refuse before anything is read at length or written
  const from = await realpath(path.resolve(options.from)).catch(() => {
    throw new BackupError(`${options.from} does not exist`);
  });
  if (!(await isEmptyOrMissing(dataDir))) throw new BackupError(`the data directory ${dataDir} is not empty: restore into an empty (or new) data directory`);
  if (!(await isEmptyOrMissing(workspacesRoot))) throw new BackupError(`the workspaces root ${workspacesRoot} is not empty: restore into an empty (or new) one`);
  if (database.provider === "sqlite" && existsSync(database.file)) throw new BackupError(`the database ${database.file} exists already: restore into a new one`);
  if (isInside(dataDir, from) || isInside(from, dataDir)) throw new BackupError("the backup and the data directory overlap");

  if (database.provider === "postgresql") {
    const why = await pgNotEmpty(database.url);
    if (why) throw new BackupError(why);
  }

  const backup = await verifyBackup(from, log);
  const { manifest, entries } = backup;
  if (manifest.database.provider !== database.provider)
    throw new BackupError(
      `the backup holds a ${manifest.database.provider} database but DATABASE_URL names ${database.provider}: restore into the same kind of database`,
    );

  log(`restoring the backup of ${manifest.finishedAt} (Conduit ${manifest.versions.conduit}${manifest.versions.commit ? ` ${manifest.versions.commit.slice(0, 12)}` : ""}) into ${dataDir}`);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await mkdir(workspacesRoot, { recursive: true, mode: 0o755 });

  // the database
  const dbSource = path.join(from, manifest.database.file);
  if (database.provider === "sqlite") {
    log(`database: writing ${database.file}`);
    await mkdir(path.dirname(database.file), { recursive: true, mode: 0o700 });
    const partial = `${database.file}.restoring`;
    await copyOut(dbSource, partial, { part: "data", path: "db", type: "file", mode: 0o600, mtimeMs: Date.now(), size: manifest.database.size, sha256: manifest.database.sha256 });
    const check = new Database(partial);
    try {
      const ok = check.pragma("quick_check", { simple: true });
      if (ok !== "ok") throw new BackupError(`the restored database fails SQLite's quick_check: ${String(ok)}`);
    } finally {
      check.close();
    }
    await rename(partial, database.file);
  } else {
    const pgRestore = findPgTool("pg_restore");
    const { dbname, env } = libpqConnection(database.url);
    log(`database: pg_restore (${pgRestore}) into ${redactUrl(database.url)}`);
    await runTool(pgRestore, ["--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction", `--dbname=${dbname}`, dbSource], env, log, "database: pg_restore");
  }
  log("database: done");

  // the files: folders and files first, links last (no write ever goes through a restored link)
  const rootOf = (part: Part) => (part === "data" ? dataDir : workspacesRoot);
  const tick = ticker(log);
  let files = 0;
  let bytes = 0;
  const fileCount = entries.filter((e) => e.type === "file").length;
  const dirs: Extract<Entry, { type: "dir" }>[] = [];
  for (const e of entries) {
    const target = path.join(rootOf(e.part), ...e.path.split("/"));
    if (e.type === "dir") {
      await mkdir(target, { mode: 0o700 });
      dirs.push(e);
    } else if (e.type === "file") {
      await copyOut(path.join(from, e.part, ...e.path.split("/")), target, e);
      files++;
      bytes += e.size;
      tick(() => `files: ${files}/${fileCount}, ${mb(bytes)}`);
    }
  }
  for (const e of entries) if (e.type === "symlink") await symlink(e.target, path.join(rootOf(e.part), ...e.path.split("/")));
  for (const e of dirs.reverse()) {
    const target = path.join(rootOf(e.part), ...e.path.split("/"));
    await chmod(target, e.mode & 0o7777);
    const mtime = new Date(e.mtimeMs);
    await utimes(target, mtime, mtime).catch(() => undefined);
  }
  log(`files: done, ${files} files, ${mb(bytes)}`);

  // a workspaces root at another path: the rows and the CLI's project folders follow it
  const remapped: RestoreResult["remapped"] = [];
  const notes: string[] = [];
  const oldRoots = [...new Set([manifest.source.workspacesRoot, manifest.source.workspacesRootAsSet ?? manifest.source.workspacesRoot])];
  const newRoot = await realpath(workspacesRoot);
  if (!oldRoots.includes(newRoot)) {
    log(`paths: the workspaces root moved from ${oldRoots[0]} to ${newRoot}; updating the workspaces' paths`);
    const moved = (p: string) => {
      for (const oldRoot of oldRoots) {
        if (p === oldRoot) return newRoot;
        if (p.startsWith(`${oldRoot}/`)) return newRoot + p.slice(oldRoot.length);
      }
      return null;
    };
    // the CLI names a project folder after its real working directory
    const realOf = (p: string) => manifest.source.workspacesRootAsSet !== undefined && p.startsWith(`${manifest.source.workspacesRootAsSet}/`) ? manifest.source.workspacesRoot + p.slice(manifest.source.workspacesRootAsSet.length) : p;
    const rows = database.provider === "sqlite" ? remapSqlite(database.file, moved) : await remapPostgres(database.url, moved);
    remapped.push(...rows.map(({ from: f, to }) => ({ from: f, to })));
    for (const row of rows) {
      const projects = path.join(dataDir, "claude-config", row.workspaceId, "projects");
      const newName = cliProjectDirName(row.to);
      for (const oldName of new Set([cliProjectDirName(row.from), cliProjectDirName(realOf(row.from))])) {
        if (oldName.length > 200 || newName.length > 200) {
          notes.push(`The CLI's project folder of ${row.to} is not renamed (a path this long is shortened by the CLI); a resume there may start a new conversation.`);
          break;
        }
        const info = await lstat(path.join(projects, oldName)).catch(() => undefined);
        if (info?.isDirectory() && !existsSync(path.join(projects, newName))) await rename(path.join(projects, oldName), path.join(projects, newName));
      }
    }
    if (rows.some((r) => r.kind === "worktree"))
      notes.push("Session git worktrees (.conduit/worktrees) keep their old absolute paths inside git: run `git worktree repair` in the workspaces that have some.");
  }
  for (const n of [...manifest.notes, ...notes]) log(`note: ${n}`);
  log(`restore complete. Start Conduit with these settings (npm start applies the migrations a newer Conduit needs).`);
  return { manifest, remapped, notes };
}

interface RemappedRow {
  kind: "workspace" | "worktree";
  workspaceId: string;
  from: string;
  to: string;
}

function remapSqlite(file: string, moved: (p: string) => string | null): RemappedRow[] {
  const db = new Database(file);
  const rows: RemappedRow[] = [];
  try {
    db.transaction(() => {
      for (const w of db.prepare('SELECT "id", "rootPath" FROM "Workspace"').all() as { id: string; rootPath: string }[]) {
        const to = moved(w.rootPath);
        if (to === null) continue;
        db.prepare('UPDATE "Workspace" SET "rootPath" = ? WHERE "id" = ?').run(to, w.id);
        rows.push({ kind: "workspace", workspaceId: w.id, from: w.rootPath, to });
      }
      const sessions = db.prepare('SELECT "id", "workspaceId", "worktreePath" FROM "Session" WHERE "worktreePath" IS NOT NULL').all() as {
        id: string;
        workspaceId: string;
        worktreePath: string;
      }[];
      for (const s of sessions) {
        const to = moved(s.worktreePath);
        if (to === null) continue;
        db.prepare('UPDATE "Session" SET "worktreePath" = ? WHERE "id" = ?').run(to, s.id);
        rows.push({ kind: "worktree", workspaceId: s.workspaceId, from: s.worktreePath, to });
      }
    })();
  } finally {
    db.close();
  }
  return rows;
}

async function remapPostgres(url: string, moved: (p: string) => string | null): Promise<RemappedRow[]> {
  return pgQuery(url, async (client) => {
    const rows: RemappedRow[] = [];
    await client.query("BEGIN");
    try {
      for (const w of (await client.query<{ id: string; rootPath: string }>('SELECT "id", "rootPath" FROM "Workspace"')).rows) {
        const to = moved(w.rootPath);
        if (to === null) continue;
        await client.query('UPDATE "Workspace" SET "rootPath" = $1 WHERE "id" = $2', [to, w.id]);
        rows.push({ kind: "workspace", workspaceId: w.id, from: w.rootPath, to });
      }
      const sessions = await client.query<{ id: string; workspaceId: string; worktreePath: string }>(
        'SELECT "id", "workspaceId", "worktreePath" FROM "Session" WHERE "worktreePath" IS NOT NULL',
      );
      for (const s of sessions.rows) {
        const to = moved(s.worktreePath);
        if (to === null) continue;
        await client.query('UPDATE "Session" SET "worktreePath" = $1 WHERE "id" = $2', [to, s.id]);
        rows.push({ kind: "worktree", workspaceId: s.workspaceId, from: s.worktreePath, to });
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
    return rows;
  });
}
