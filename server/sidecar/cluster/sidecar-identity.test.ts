import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resolveSidecarId, sidecarIdFile } from "./sidecar-identity";

describe("resolveSidecarId", () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "conduit-sidecar-id-"));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("uses the configured id and writes nothing", () => {
    const dir = tempDir();
    expect(resolveSidecarId({ configured: "sidecar-a", dataDir: dir })).toBe("sidecar-a");
    expect(() => readFileSync(path.join(dir, sidecarIdFile))).toThrow();
  });

  it("generates an id once and keeps it", () => {
    const dir = tempDir();
    const first = resolveSidecarId({ dataDir: dir });
    expect(first).toMatch(/^sc-[0-9a-f]{12}$/);
    expect(resolveSidecarId({ dataDir: dir })).toBe(first);
    expect(readFileSync(path.join(dir, sidecarIdFile), "utf8").trim()).toBe(first);
  });

  it("gives two data directories two ids", () => {
    expect(resolveSidecarId({ dataDir: tempDir() })).not.toBe(resolveSidecarId({ dataDir: tempDir() }));
  });

  it("refuses a kept file that holds no valid id instead of replacing it", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, sidecarIdFile), "not an id!\n");
    expect(() => resolveSidecarId({ dataDir: dir })).toThrow(/does not hold a sidecar id/);
  });
});
