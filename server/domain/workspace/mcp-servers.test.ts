import { describe, expect, it } from "vitest";
import {
  mcpConfigDocument,
  mergeSecretEntries,
  MissingSecretValue,
  parseStoredArgs,
  ZMcpServerCreate,
  ZMcpServerUpdate,
} from "./mcp-servers";

const stdio = { transport: "stdio", name: "files", command: "/usr/bin/node", args: ["server.mjs"], env: [{ name: "TOKEN", value: "t" }] };
const http = { transport: "http", name: "remote", url: "https://mcp.example.com/mcp", headers: [{ name: "Authorization", value: "Bearer x" }] };

function firstMessage(input: unknown, schema: { safeParse(v: unknown): { success: boolean; error?: { issues: { message: string }[] } } } = ZMcpServerCreate): string | undefined {
  const parsed = schema.safeParse(input);
  return parsed.success ? undefined : parsed.error!.issues[0]!.message;
}

describe("MCP server input", () => {
  it("accepts a stdio and an http server, with defaults", () => {
    expect(ZMcpServerCreate.parse(stdio)).toMatchObject({ enabled: true, args: ["server.mjs"] });
    expect(ZMcpServerCreate.parse({ transport: "stdio", name: "a_b-1", command: "srv" })).toMatchObject({ args: [], env: [], enabled: true });
    expect(ZMcpServerCreate.parse(http)).toMatchObject({ url: "https://mcp.example.com/mcp", enabled: true });
  });

  it("refuses bad names, empty commands, non-http URLs, credentials in URLs and bad secret names", () => {
    expect(firstMessage({ ...stdio, name: "has space" })).toMatch(/letters, digits/);
    expect(firstMessage({ ...stdio, name: "x".repeat(65) })).toMatch(/letters, digits/);
    expect(firstMessage({ ...stdio, command: "  " })).toMatch(/needs a command/);
    expect(firstMessage({ ...stdio, command: "a\0b" })).toMatch(/NUL/);
    expect(firstMessage({ ...http, url: "file:///etc/passwd" })).toMatch(/http:\/\/ or https:\/\//);
    expect(firstMessage({ ...http, url: "javascript:alert(1)" })).toMatch(/http:\/\/ or https:\/\//);
    expect(firstMessage({ ...http, url: "https://user:pw@example.com/" })).toMatch(/credentials/);
    expect(firstMessage({ ...stdio, env: [{ name: "1BAD", value: "x" }] })).toMatch(/environment variable name/);
    expect(firstMessage({ ...http, headers: [{ name: "X-A", value: "a\r\nInjected: 1" }] })).toMatch(/line breaks/);
    expect(firstMessage({ ...http, headers: [{ name: "X-A", value: "1" }, { name: "x-a", value: "2" }] })).toMatch(/twice/);
    expect(firstMessage({ ...stdio, args: Array.from({ length: 65 }, () => "a") })).toMatch(/At most 64/);
    expect(firstMessage({ ...stdio, env: [{ name: "BIG", value: "x".repeat(8001) }] })).toMatch(/too long/);
    expect(firstMessage({ ...stdio, transport: "sse" })).toBeDefined();
    expect(firstMessage({ surprise: true }, ZMcpServerUpdate)).toBeDefined();
  });

  it("keeps a stored secret named without a value, replaces one given a value, drops one not listed", () => {
    const stored = { A: "old-a", B: "old-b" };
    expect(mergeSecretEntries(stored, [{ name: "A" }, { name: "C", value: "new-c" }])).toEqual({ A: "old-a", C: "new-c" });
    expect(mergeSecretEntries(stored, [{ name: "B", value: "new-b" }])).toEqual({ B: "new-b" });
    expect(() => mergeSecretEntries(stored, [{ name: "D" }])).toThrow(MissingSecretValue);
  });

  it("writes the CLI's mcpServers document", () => {
    expect(
      mcpConfigDocument([
        { name: "files", transport: "stdio", command: "node", args: ["s.mjs"], env: { TOKEN: "t" } },
        { name: "remote", transport: "http", url: "https://x.example/mcp", headers: { Authorization: "Bearer y" } },
      ]),
    ).toEqual({
      mcpServers: {
        files: { type: "stdio", command: "node", args: ["s.mjs"], env: { TOKEN: "t" } },
        remote: { type: "http", url: "https://x.example/mcp", headers: { Authorization: "Bearer y" } },
      },
    });
  });

  it("reads a damaged args column as no arguments", () => {
    expect(parseStoredArgs('["a","b"]')).toEqual(["a", "b"]);
    expect(parseStoredArgs("not json")).toEqual([]);
    expect(parseStoredArgs('[1,2]')).toEqual([]);
  });
});
