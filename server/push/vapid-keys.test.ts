import { createECDH } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { generateVapidKeys, loadVapidKeys, vapidKeysFile } from "./vapid-keys";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "conduit-vapid-"));
  dirs.push(dir);
  return dir;
}

describe("VAPID keys", () => {
  it("generates a P-256 pair whose public key is the private key's point", () => {
    const keys = generateVapidKeys();
    const ecdh = createECDH("prime256v1");
    ecdh.setPrivateKey(Buffer.from(keys.privateKey, "base64url"));
    expect(ecdh.getPublicKey().toString("base64url")).toBe(keys.publicKey);
    expect(Buffer.from(keys.publicKey, "base64url")).toHaveLength(65);
    expect(Buffer.from(keys.privateKey, "base64url")).toHaveLength(32);
  });

  it("makes the file once, readable by its owner only, and keeps it", () => {
    const dir = path.join(tempDir(), "data");
    const first = loadVapidKeys(dir);
    const file = path.join(dir, vapidKeysFile);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(first);
    expect(loadVapidKeys(dir)).toEqual(first);
    // no temp files left behind
    expect(readdirSync(dir)).toEqual([vapidKeysFile]);
  });

  it("reads an existing pair (made by the other process) instead of replacing it", () => {
    const dir = tempDir();
    const theirs = generateVapidKeys();
    writeFileSync(path.join(dir, vapidKeysFile), JSON.stringify(theirs), { mode: 0o600 });
    expect(loadVapidKeys(dir)).toEqual(theirs);
  });

  it("refuses a damaged file rather than making new keys that would orphan every subscription", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, vapidKeysFile), JSON.stringify({ publicKey: "short", privateKey: "x" }));
    expect(() => loadVapidKeys(dir)).toThrow(/not a VAPID key pair/);
  });
});
