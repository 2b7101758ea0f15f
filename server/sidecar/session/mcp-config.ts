/**
 * The MCP servers of a session's CLI child: the workspace's enabled `WorkspaceMcpServer` rows,
 * their secrets opened here (the only place they are), written per spawn as an `--mcp-config`
 * file: a private directory of its own (`mkdtemp`, 0700) outside the workspace holding
 * `mcp.json` (0600), shown read-only inside the bubblewrap sandbox at the same path, removed
 * when that child exits (or did not start).
 *
 * The directories go under the sidecar's `DATA_DIR/run/mcp` (emptied at start: {@link resetMcpRunRoot}),
 * else the OS temp dir. Flags: `--mcp-config <file>`, plus `--strict-mcp-config` unless an owner trusted the
 * workspace's own settings (then its reviewed `.mcp.json` keeps working beside these). A
 * workspace without servers gets no flags and no file (an untrusted workspace loads no MCP
 * configuration of its own anyway: `--setting-sources ""` without trust).
 *
 * Stdio servers are started by the CLI inside the session's sandbox: their command must exist
 * there (system directories such as /usr/bin, or the workspace).
 */
import { mkdirSync, rmSync } from "node:fs";
import { chmod, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Db } from "@/server/db/client";
import { mcpConfigDocument, mcpSecretsContext, parseStoredArgs, ZMcpSecrets, type McpSpawnServer } from "@/server/domain/workspace/mcp-servers";
import { loadSecretKey, open } from "@/server/secrets/secret-box";

/** The enabled servers of a workspace with their secrets opened; a row whose secrets cannot be opened is left out (and reported). */
export async function loadWorkspaceMcpServers(
  db: Db,
  dataDir: string,
  workspaceId: string,
  warn: (fields: Record<string, unknown>, message: string) => void = () => {},
): Promise<McpSpawnServer[]> {
  const rows = await db.workspaceMcpServer.findMany({ where: { workspaceId, enabled: true }, orderBy: { name: "asc" } });
  const servers: McpSpawnServer[] = [];
  for (const row of rows) {
    let values: Record<string, string> = {};
    if (row.secrets !== null) {
      try {
        values = ZMcpSecrets.parse(JSON.parse(open(loadSecretKey(dataDir), row.secrets, mcpSecretsContext(row.id)))).values;
      } catch (err) {
        warn({ workspaceId, server: row.name, err }, "an MCP server's secrets cannot be opened; the server is left out");
        continue;
      }
    }
    if (row.transport === "http") {
      if (row.url !== null) servers.push({ name: row.name, transport: "http", url: row.url, headers: values });
    } else if (row.command !== null) {
      servers.push({ name: row.name, transport: "stdio", command: row.command, args: parseStoredArgs(row.args), env: values });
    }
  }
  return servers;
}

/** The `--mcp-config` of one spawn. */
export interface SpawnMcpConfig {
  /** Flags added to the CLI's argv. */
  readonly args: readonly string[];
  /** The private directory: shown read-only in the sandbox. */
  readonly dir: string;
  readonly file: string;
  /** Removes the directory (idempotent, never throws). */
  remove(): Promise<void>;
}

/**
 * Empties and (re)makes `runRoot` (0700), the parent of the per-spawn directories: called once at
 * sidecar start, so the configs of children an earlier sidecar left behind (a crash) do not stay
 * on disk. One sidecar per data directory: nothing else uses it.
 */
export function resetMcpRunRoot(runRoot: string): void {
  rmSync(runRoot, { recursive: true, force: true });
  mkdirSync(runRoot, { recursive: true, mode: 0o700 });
}

/** Writes the config of one spawn; undefined (no flags, no file) for no servers. */
export async function writeSpawnMcpConfig(
  servers: readonly McpSpawnServer[],
  options: { trusted: boolean; runRoot?: string | undefined },
): Promise<SpawnMcpConfig | undefined> {
  if (servers.length === 0) return undefined;
  // A real path: bwrap binds it at the same path, and the CLI opens it by that path inside.
  const dir = await realpath(await mkdtemp(path.join(options.runRoot ?? os.tmpdir(), "conduit-mcp-")));
  const file = path.join(dir, "mcp.json");
  let removed: Promise<void> | undefined;
  const remove = () => (removed ??= rm(dir, { recursive: true, force: true }).catch(() => undefined));
  try {
    await chmod(dir, 0o700);
    await writeFile(file, JSON.stringify(mcpConfigDocument(servers)), { mode: 0o600, flag: "wx" });
  } catch (err) {
    await remove();
    throw err;
  }
  return { args: ["--mcp-config", file, ...(options.trusted ? [] : ["--strict-mcp-config"])], dir, file, remove };
}
