/**
 * A workspace's MCP servers as the web app lists and changes them: every member reads them
 * (names, commands, URLs, and the names of their secrets), owners add, change and delete them,
 * audited as `workspace.mcp.create|update|delete` (the audit details name secrets, never values).
 * Secret values are sealed here (`server/secrets`) before they reach the database and are never
 * opened by the web app; the sidecar opens them when it writes a spawn's `--mcp-config`.
 * Changes apply to CLI processes started after them (new sessions, restarts).
 */
import { getDb } from "@/server/db/client";
import { getEnv } from "@/server/env/env";
import {
  maxMcpServersPerWorkspace,
  mcpSecretsContext,
  mergeSecretEntries,
  MissingSecretValue,
  parseStoredArgs,
  ZMcpSecrets,
  ZMcpServerCreate,
  ZMcpServerUpdate,
  type McpServerCreate,
  type McpServerUpdate,
} from "@/server/domain/workspace/mcp-servers";
import { loadSecretKey, open, seal } from "@/server/secrets/secret-box";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { McpServerView } from "@/server/shared/wire/session-mcp";
import { requireWorkspaceAccess } from "@/server/web/workspaces";

export { ZMcpServerCreate, ZMcpServerUpdate };

type Row = {
  id: string;
  name: string;
  transport: string;
  command: string | null;
  args: string;
  url: string | null;
  secrets: string | null;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
};

function secretKey(): Buffer {
  return loadSecretKey(getEnv().CONDUIT_DATA_DIR);
}

/** The names of a row's secrets, opened only to learn the names (values never leave this module); undefined when they cannot be opened. */
function secretNames(row: Row): string[] | undefined {
  try {
    return Object.keys(openSecrets(row)).sort();
  } catch {
    return undefined;
  }
}

function openSecrets(row: Row): Record<string, string> {
  if (row.secrets === null) return {};
  try {
    return ZMcpSecrets.parse(JSON.parse(open(secretKey(), row.secrets, mcpSecretsContext(row.id)))).values;
  } catch {
    throw new AppError(ErrorCode.internal, `The stored secrets of MCP server ${row.name} cannot be opened (was the instance's secret key replaced?). Enter them again.`);
  }
}

function viewOf(row: Row): McpServerView {
  const known = secretNames(row);
  const names = (known ?? []).map((name) => ({ name, set: true as const }));
  const transport = row.transport === "http" ? "http" : "stdio";
  return {
    id: row.id,
    name: row.name,
    transport,
    command: row.command,
    args: parseStoredArgs(row.args),
    url: row.url,
    env: transport === "stdio" ? names : [],
    headers: transport === "http" ? names : [],
    enabled: row.enabled,
    ...(known === undefined ? { secretsUnreadable: true as const } : {}),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: string }).code === "P2002";
}

function duplicateName(name: string): AppError {
  return new AppError(ErrorCode.conflict, `This workspace already has an MCP server named ${name}.`);
}

/** The servers of a workspace (members), by name. */
export async function listMcpServers(userId: string, slug: string): Promise<McpServerView[]> {
  const ws = await requireWorkspaceAccess(userId, slug, "read");
  const rows = await getDb().workspaceMcpServer.findMany({ where: { workspaceId: ws.id }, orderBy: { name: "asc" } });
  return rows.map(viewOf);
}

/** Adds a server (owners); audited `workspace.mcp.create`. */
export async function createMcpServer(userId: string, slug: string, input: McpServerCreate): Promise<McpServerView> {
  const ws = await requireWorkspaceAccess(userId, slug, "manageSettings");
  const db = getDb();
  if ((await db.workspaceMcpServer.count({ where: { workspaceId: ws.id } })) >= maxMcpServersPerWorkspace) {
    throw new AppError(ErrorCode.conflict, `A workspace has at most ${maxMcpServersPerWorkspace} MCP servers.`);
  }
  const entries = input.transport === "stdio" ? input.env : input.headers;
  let values: Record<string, string>;
  try {
    values = mergeSecretEntries({}, entries);
  } catch (err) {
    if (err instanceof MissingSecretValue) throw new AppError(ErrorCode.invalidPayload, err.message);
    throw err;
  }
  try {
    const row = await db.$transaction(async (tx) => {
      const created = await tx.workspaceMcpServer.create({
        data: {
          workspaceId: ws.id,
          name: input.name,
          transport: input.transport,
          command: input.transport === "stdio" ? input.command : null,
          args: JSON.stringify(input.transport === "stdio" ? input.args : []),
          url: input.transport === "http" ? input.url : null,
          enabled: input.enabled,
          createdById: userId,
        },
      });
      // sealed for the row's own id, so it is written once the id exists
      const sealed = Object.keys(values).length === 0 ? null : seal(secretKey(), JSON.stringify({ values }), mcpSecretsContext(created.id));
      const row = sealed === null ? created : await tx.workspaceMcpServer.update({ where: { id: created.id }, data: { secrets: sealed } });
      await tx.auditLog.create({
        data: {
          actorId: userId,
          action: "workspace.mcp.create",
          objectType: "mcp-server",
          objectId: created.id,
          workspaceId: ws.id,
          details: JSON.stringify({ name: input.name, transport: input.transport, secrets: Object.keys(values).sort(), enabled: input.enabled }),
        },
      });
      return row;
    });
    return viewOf(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateName(input.name);
    throw err;
  }
}

async function findRow(workspaceId: string, id: string): Promise<Row> {
  const row = await getDb().workspaceMcpServer.findFirst({ where: { id, workspaceId } });
  if (!row) throw new AppError(ErrorCode.notFound, "No such MCP server in this workspace.");
  return row;
}

/** Changes a server (owners); a secret listed without a value keeps its value; audited `workspace.mcp.update`. */
export async function updateMcpServer(userId: string, slug: string, id: string, input: McpServerUpdate): Promise<McpServerView> {
  const ws = await requireWorkspaceAccess(userId, slug, "manageSettings");
  const db = getDb();
  const row = await findRow(ws.id, id);
  const stdio = row.transport !== "http";
  if (stdio && (input.url !== undefined || input.headers !== undefined)) {
    throw new AppError(ErrorCode.invalidPayload, "A stdio server has a command and environment variables, not a URL or headers.");
  }
  if (!stdio && (input.command !== undefined || input.args !== undefined || input.env !== undefined)) {
    throw new AppError(ErrorCode.invalidPayload, "An http server has a URL and headers, not a command, arguments or environment variables.");
  }
  const entries = stdio ? input.env : input.headers;
  let secrets: string | null | undefined;
  let secretList: string[] | undefined;
  if (entries !== undefined) {
    let values: Record<string, string>;
    try {
      // every value given: nothing stored is needed (and a blob that no longer opens is simply replaced)
      values = mergeSecretEntries(entries.every((e) => e.value !== undefined) ? {} : openSecrets(row), entries);
    } catch (err) {
      if (err instanceof MissingSecretValue) throw new AppError(ErrorCode.invalidPayload, err.message);
      throw err;
    }
    secretList = Object.keys(values).sort();
    secrets = secretList.length === 0 ? null : seal(secretKey(), JSON.stringify({ values }), mcpSecretsContext(row.id));
  }
  const changed = Object.keys(input).filter((k) => k !== "env" && k !== "headers");
  try {
    const [updated] = await db.$transaction([
      db.workspaceMcpServer.update({
        where: { id: row.id },
        data: {
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.command !== undefined ? { command: input.command } : {}),
          ...(input.args !== undefined ? { args: JSON.stringify(input.args) } : {}),
          ...(input.url !== undefined ? { url: input.url } : {}),
          ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
          ...(secrets !== undefined ? { secrets } : {}),
        },
      }),
      db.auditLog.create({
        data: {
          actorId: userId,
          action: "workspace.mcp.update",
          objectType: "mcp-server",
          objectId: row.id,
          workspaceId: ws.id,
          details: JSON.stringify({ name: input.name ?? row.name, changed, ...(secretList !== undefined ? { secrets: secretList } : {}) }),
        },
      }),
    ]);
    return viewOf(updated);
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateName(input.name ?? row.name);
    throw err;
  }
}

/** Deletes a server (owners); audited `workspace.mcp.delete`. */
export async function deleteMcpServer(userId: string, slug: string, id: string): Promise<{ id: string }> {
  const ws = await requireWorkspaceAccess(userId, slug, "manageSettings");
  const db = getDb();
  const row = await findRow(ws.id, id);
  await db.$transaction([
    db.workspaceMcpServer.delete({ where: { id: row.id } }),
    db.auditLog.create({
      data: {
        actorId: userId,
        action: "workspace.mcp.delete",
        objectType: "mcp-server",
        objectId: row.id,
        workspaceId: ws.id,
        details: JSON.stringify({ name: row.name, transport: row.transport }),
      },
    }),
  ]);
  return { id: row.id };
}
