// A dependency-free stdio MCP server (newline-delimited JSON-RPC) for tests that run it where
// node_modules is out of reach (inside a session's sandbox): one tool, `ping`. It exits unless
// PING_TOKEN is in its environment, so "connected" proves that the secret env arrived.
if (!process.env.PING_TOKEN) { process.stderr.write("PING_TOKEN missing\n"); process.exit(3); }
let buffer = "";
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
process.stdin.setEncoding("utf8").on("data", (chunk) => {
  buffer += chunk;
  let i;
  while ((i = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, i).trim();
    buffer = buffer.slice(i + 1);
    if (!line) continue;
    const msg = JSON.parse(line);
    if (msg.id === undefined) continue;
    if (msg.method === "initialize") send({ jsonrpc: "2.0", id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "ping", version: "1.0.0" } } });
    else if (msg.method === "tools/list") send({ jsonrpc: "2.0", id: msg.id, result: { tools: [{ name: "ping", description: "Answers pong.", inputSchema: { type: "object", properties: {} } }] } });
    else if (msg.method === "tools/call") send({ jsonrpc: "2.0", id: msg.id, result: { content: [{ type: "text", text: "pong" }] } });
    else send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "no such method" } });
  }
});
