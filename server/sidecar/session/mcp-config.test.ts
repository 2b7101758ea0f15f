import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { resetMcpRunRoot, writeSpawnMcpConfig } from "./mcp-config";

const servers = [{ name: "files", transport: "stdio" as const, command: "/usr/bin/node", args: ["s.mjs"], env: { TOKEN: "t-123" } }];

describe("a spawn's --mcp-config", () => {
  it("is a 0600 file in a 0700 directory of its own under the run root, strict unless trusted, removed on demand", async () => {
    const runRoot = mkdtempSync(path.join(os.tmpdir(), "conduit-mcp-root-"));
    const config = (await writeSpawnMcpConfig(servers, { trusted: false, runRoot }))!;
    expect(path.dirname(config.dir)).toBe(runRoot);
    expect(config.args).toEqual(["--mcp-config", config.file, "--strict-mcp-config"]);
    expect(statSync(config.file).mode & 0o777).toBe(0o600);
    expect(statSync(config.dir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(config.file, "utf8"))).toEqual({
      mcpServers: { files: { type: "stdio", command: "/usr/bin/node", args: ["s.mjs"], env: { TOKEN: "t-123" } } },
    });
    await config.remove();
    await config.remove();
    expect(existsSync(config.dir)).toBe(false);

    const trusted = (await writeSpawnMcpConfig(servers, { trusted: true, runRoot }))!;
    expect(trusted.args).toEqual(["--mcp-config", trusted.file]);
    await trusted.remove();
  });

  it("is nothing at all without servers", async () => {
    const runRoot = mkdtempSync(path.join(os.tmpdir(), "conduit-mcp-root-"));
    expect(await writeSpawnMcpConfig([], { trusted: false, runRoot })).toBeUndefined();
    expect(readdirSync(runRoot)).toEqual([]);
  });

  it("leaves nothing of an earlier sidecar's spawns once the run root is reset", () => {
    const runRoot = path.join(mkdtempSync(path.join(os.tmpdir(), "conduit-mcp-root-")), "run", "mcp");
    mkdirSync(path.join(runRoot, "conduit-mcp-old"), { recursive: true });
    writeFileSync(path.join(runRoot, "conduit-mcp-old", "mcp.json"), "{}");
    resetMcpRunRoot(runRoot);
    expect(readdirSync(runRoot)).toEqual([]);
    expect(statSync(runRoot).mode & 0o777).toBe(0o700);
  });
});
