/**
 * `session:mcp-status` (`server/shared/wire/session-mcp.ts`): a live session's MCP servers as its
 * CLI reports them (`mcp_status`), for every member. A session without a live child answers
 * `conflict` (the page says the servers start with the session's process).
 */
import type { Logger } from "pino";
import type { Server, Socket } from "socket.io";
import type { Db } from "@/server/db/client";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { SocketUser } from "@/server/shared/wire/events";
import { SessionMcpCommand, ZMcpStatusRead, type McpServerStatus, type McpStatusReply } from "@/server/shared/wire/session-mcp";
import type { SessionHub } from "@/server/sidecar/session/session-hub";
import { localSessionRouter, type SessionRouter } from "@/server/sidecar/cluster/command-forwarder";
import { handleCommand, limitCommandsInFlight } from "./handle-command";
import { authorizeSession } from "./session-access";

/** Most servers and tools handed to a browser. */
const maxServers = 100;
const maxTools = 200;

/** Serves `session:mcp-status` on every socket of `io`. Returns a function that detaches it. */
export function attachSessionMcpSockets(
  io: Server,
  deps: { hub: SessionHub; db: Db; log: Logger; /** Runs the read at the session's owner (cluster). */ router?: SessionRouter },
): () => void {
  const status = (deps.router ?? localSessionRouter).route("mcp.status", async ({ sessionId }: { sessionId: string }) => {
    const runner = await deps.hub.liveRunner(sessionId);
    if (!runner) throw new AppError(ErrorCode.conflict, "The session's process is not running: its MCP servers start with it (send a prompt).");
    return toMcpStatus(await runner.control({ subtype: "mcp_status" }));
  });
  const onConnection = (socket: Socket) => {
    const user = (socket.data as { user?: SocketUser }).user;
    if (!user) return;
    limitCommandsInFlight(socket, deps.log);
    socket.on(
      SessionMcpCommand.status,
      handleCommand(
        ZMcpStatusRead,
        async (p): Promise<McpStatusReply> => {
          await authorizeSession(deps.db, user.id, p.sessionId, "read", "");
          return status(p.sessionId, { sessionId: p.sessionId });
        },
        deps.log,
      ),
    );
  };
  io.on("connection", onConnection);
  return () => io.off("connection", onConnection);
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** The CLI's `mcp_status` answer reduced to what the page shows (server info and tool schemas stay behind). */
export function toMcpStatus(raw: Record<string, unknown>): McpStatusReply {
  const list = Array.isArray(raw.mcpServers) ? raw.mcpServers : [];
  const servers: McpServerStatus[] = [];
  for (const item of list.slice(0, maxServers)) {
    if (typeof item !== "object" || item === null) continue;
    const s = item as Record<string, unknown>;
    const name = str(s.name);
    if (!name) continue;
    const tools = Array.isArray(s.tools)
      ? s.tools.flatMap((t) => {
          const n = typeof t === "string" ? t : typeof t === "object" && t !== null ? str((t as { name?: unknown }).name) : undefined;
          return n ? [n] : [];
        })
      : [];
    const error = str(s.error);
    const transport = str(s.transport) ?? (typeof s.config === "object" && s.config !== null ? str((s.config as { type?: unknown }).type) : undefined);
    servers.push({
      name,
      status: str(s.status) ?? "unknown",
      ...(error !== undefined ? { error: error.slice(0, 2000) } : {}),
      ...(transport !== undefined ? { transport } : {}),
      tools: tools.slice(0, maxTools),
    });
  }
  return { servers };
}
