import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadSecretKey, open, seal, secretKeyFile } from "./secret-box";

describe("secret box", () => {
  it("makes one 0600 key per data directory and keeps it", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "conduit-secret-"));
    const key = loadSecretKey(dir);
    expect(key).toHaveLength(32);
    expect(statSync(path.join(dir, secretKeyFile)).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(path.join(dir, secretKeyFile), "utf8").trim(), "base64").equals(key)).toBe(true);
  });

  it("refuses a damaged key file instead of replacing it", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "conduit-secret-"));
    writeFileSync(path.join(dir, secretKeyFile), "short\n");
    expect(() => loadSecretKey(dir)).toThrow(/not a 32-byte key/);
  });

  it("seals without the plaintext and opens only with the same key and context", () => {
    const key = loadSecretKey(mkdtempSync(path.join(os.tmpdir(), "conduit-secret-")));
    const other = loadSecretKey(mkdtempSync(path.join(os.tmpdir(), "conduit-secret-")));
    const sealed = seal(key, '{"values":{"TOKEN":"hunter2"}}', "mcp-server:a");
    expect(sealed).not.toContain("hunter2");
    expect(sealed).not.toBe(seal(key, '{"values":{"TOKEN":"hunter2"}}', "mcp-server:a"));
    expect(open(key, sealed, "mcp-server:a")).toBe('{"values":{"TOKEN":"hunter2"}}');
    expect(() => open(key, sealed, "mcp-server:b")).toThrow();
    expect(() => open(other, sealed, "mcp-server:a")).toThrow();
    const [v, iv, tag, body] = sealed.split(".");
    const flipped = Buffer.from(body!, "base64url");
    flipped[0]! ^= 1;
    expect(() => open(key, [v, iv, tag, flipped.toString("base64url")].join("."), "mcp-server:a")).toThrow();
    expect(() => open(key, "plain text", "mcp-server:a")).toThrow(/Not a sealed value/);
  });
});
