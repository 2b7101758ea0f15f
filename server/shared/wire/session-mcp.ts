/**
 * MCP servers in the contract: the view of a workspace's configured servers the web routes
 * answer (secret values never included: names with `set: true`), and the socket command that
 * asks a live session's CLI for its servers' status (`mcp_status`; members read).
 */
import { z } from "zod";

/** A configured server as any member sees it. */
export interface McpServerView {
  id: string;
  name: string;
  transport: "stdio" | "http";
  command: string | null;
  args: string[];
  url: string | null;
  /** stdio: the environment variables' names, values never sent. */
  env: { name: string; set: true }[];
  /** http: the headers' names, values never sent. */
  headers: { name: string; set: true }[];
  enabled: boolean;
  /** The stored secrets cannot be opened (the instance key was replaced): enter them again. */
  secretsUnreadable?: true;
  createdAt: string;
  updatedAt: string;
}

export const SessionMcpCommand = {
  status: "session:mcp-status",
} as const;

export const ZMcpStatusRead = z.object({ sessionId: z.string().min(1).max(64) });
export type McpStatusRead = z.infer<typeof ZMcpStatusRead>;

/** One server as the session's CLI reports it. */
export interface McpServerStatus {
  name: string;
  /** As the CLI says: `connected`, `failed`, `pending`, `needs-auth`, `disabled`… */
  status: string;
  error?: string;
  transport?: string;
  /** Tool names the server offers (connected servers). */
  tools: string[];
}

export interface McpStatusReply {
  servers: McpServerStatus[];
}
