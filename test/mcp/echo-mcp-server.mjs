// A stdio MCP server for tests (the real SDK): one tool, `echo`, that answers its text. It
// refuses to start without ECHO_TOKEN in its environment, so "connected" also proves that the
// server's (secret) environment reached it through the CLI's --mcp-config.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

if (!process.env.ECHO_TOKEN) {
  process.stderr.write("echo-mcp-server: ECHO_TOKEN is not set\n");
  process.exit(3);
}

const server = new McpServer({ name: "conduit-echo", version: "1.0.0" });
server.registerTool(
  "echo",
  { description: "Answers the text it is given.", inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }),
);
await server.connect(new StdioServerTransport());
