/**
 * A workspace's MCP servers: the rules of what an owner may configure, and the `--mcp-config`
 * document a CLI child gets from them. Pure.
 *
 * - `stdio`: a command with arguments, run inside the session's sandbox by the CLI; its
 *   environment variables are secrets (tokens, keys).
 * - `http`: a streamable-HTTP endpoint (http/https only); its headers are secrets.
 * Secret values are written, replaced or removed, never read back: views carry names with
 * `set: true`. An update that lists a name without a value keeps the stored value.
 */
import { z } from "zod";

/** The CLI's server key: it becomes part of tool names (`mcp__<server>__<tool>`). */
export const mcpServerNamePattern = /^[A-Za-z0-9_-]{1,64}$/;
export const maxMcpServersPerWorkspace = 50;
export const maxMcpArgs = 64;
export const maxMcpSecrets = 50;
export const maxMcpSecretValueChars = 8000;

const noNul = (s: string) => !s.includes("\0");

export const ZMcpServerName = z
  .string()
  .trim()
  .regex(mcpServerNamePattern, "A server name has 1 to 64 letters, digits, '_' or '-' (it becomes part of its tools' names).");

const ZCommand = z
  .string()
  .trim()
  .min(1, "A stdio server needs a command.")
  .max(1000, "The command is too long (at most 1000 characters).")
  .refine(noNul, "The command contains a NUL character.");

const ZArgs = z
  .array(z.string().max(2000, "An argument is too long (at most 2000 characters).").refine(noNul, "An argument contains a NUL character."))
  .max(maxMcpArgs, `At most ${maxMcpArgs} arguments.`);

const ZUrl = z
  .string()
  .trim()
  .max(2000, "The URL is too long.")
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "" && url.username === "" && url.password === "";
    } catch {
      return false;
    }
  }, "The URL must be an http:// or https:// address (put credentials in a header, not in the URL).");

const envName = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

function ZSecretEntries(kind: "env" | "header") {
  return z
    .array(
      z.object({
        name: z
          .string()
          .trim()
          .regex(
            kind === "env" ? envName : headerName,
            kind === "env" ? "An environment variable name has letters, digits and '_' and does not start with a digit." : "Not a valid header name.",
          ),
        /** Absent: keep the stored value (updates only). */
        value: z
          .string()
          .max(maxMcpSecretValueChars, `A value is too long (at most ${maxMcpSecretValueChars} characters).`)
          .refine((v) => noNul(v) && (kind === "env" || !/[\r\n]/.test(v)), kind === "env" ? "A value contains a NUL character." : "A header value cannot contain line breaks.")
          .optional(),
      }),
    )
    .max(maxMcpSecrets, `At most ${maxMcpSecrets} entries.`)
    .refine((list) => new Set(list.map((e) => (kind === "header" ? e.name.toLowerCase() : e.name))).size === list.length, "A name appears twice.");
}

export const ZMcpEnvEntries = ZSecretEntries("env");
export const ZMcpHeaderEntries = ZSecretEntries("header");
export type McpSecretEntry = z.infer<typeof ZMcpEnvEntries>[number];

/** A new server (owners). Every secret entry needs its value. */
export const ZMcpServerCreate = z.discriminatedUnion("transport", [
  z.object({
    transport: z.literal("stdio"),
    name: ZMcpServerName,
    command: ZCommand,
    args: ZArgs.default([]),
    env: ZMcpEnvEntries.default([]),
    enabled: z.boolean().default(true),
  }),
  z.object({
    transport: z.literal("http"),
    name: ZMcpServerName,
    url: ZUrl,
    headers: ZMcpHeaderEntries.default([]),
    enabled: z.boolean().default(true),
  }),
]);
export type McpServerCreate = z.infer<typeof ZMcpServerCreate>;

/** A change (owners): only the fields given change; the transport stays. */
export const ZMcpServerUpdate = z
  .object({
    name: ZMcpServerName.optional(),
    command: ZCommand.optional(),
    args: ZArgs.optional(),
    url: ZUrl.optional(),
    env: ZMcpEnvEntries.optional(),
    headers: ZMcpHeaderEntries.optional(),
    enabled: z.boolean().optional(),
  })
  .strict();
export type McpServerUpdate = z.infer<typeof ZMcpServerUpdate>;

/** The context a row's secrets are sealed for (the AES-GCM additional data): a blob copied into another row does not open. */
export function mcpSecretsContext(rowId: string): string {
  return `mcp-server:${rowId}`;
}

/** The secrets of one server as stored (sealed) and opened in the sidecar only. */
export const ZMcpSecrets = z.object({ values: z.record(z.string(), z.string()) });
export type McpSecrets = z.infer<typeof ZMcpSecrets>;

/**
 * The stored values after an update's entries: listed with a value → that value; listed
 * without → the stored one (an error when there is none); not listed → removed.
 */
export function mergeSecretEntries(stored: Readonly<Record<string, string>>, entries: readonly McpSecretEntry[]): Record<string, string> {
  const next: Record<string, string> = {};
  for (const entry of entries) {
    const value = entry.value ?? stored[entry.name];
    if (value === undefined) throw new MissingSecretValue(entry.name);
    next[entry.name] = value;
  }
  return next;
}

/** An entry without a value and nothing stored under its name. */
export class MissingSecretValue extends Error {
  constructor(readonly entryName: string) {
    super(`${entryName} has no value yet: enter one.`);
    this.name = "MissingSecretValue";
  }
}

/** One enabled server as a spawn needs it (secrets open). */
export type McpSpawnServer =
  | { name: string; transport: "stdio"; command: string; args: string[]; env: Record<string, string> }
  | { name: string; transport: "http"; url: string; headers: Record<string, string> };

/** The `--mcp-config` document (the CLI's `.mcp.json` shape). */
export function mcpConfigDocument(servers: readonly McpSpawnServer[]): { mcpServers: Record<string, unknown> } {
  const mcpServers: Record<string, unknown> = {};
  for (const server of servers) {
    mcpServers[server.name] =
      server.transport === "stdio"
        ? { type: "stdio", command: server.command, args: server.args, env: server.env }
        : { type: "http", url: server.url, headers: server.headers };
  }
  return { mcpServers };
}

/** The stored `args` column (a JSON array of strings); anything else reads as no arguments. */
export function parseStoredArgs(json: string): string[] {
  try {
    const parsed = ZArgs.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : [];
  } catch {
    return [];
  }
}
