import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as SandboxStatusModule from "./sandbox-status";

let dataDir: string;
let module: typeof SandboxStatusModule;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), "conduit-status-"));
  process.env.CONDUIT_DATA_DIR = dataDir;
  module = await import("./sandbox-status");
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe("readSandboxStatus", () => {
  it("is undefined before the sidecar wrote its record, then reads it (at most once a second)", async () => {
    expect(await module.readSandboxStatus(1_000)).toBeUndefined();
    const status = { mode: "off", setting: "auto", warning: "bubblewrap (`bwrap`) is not installed", at: "2026-12-01T00:00:00.000Z", credentialProxy: true };
    await writeFile(path.join(dataDir, "sandbox-status.json"), JSON.stringify(status));
    expect(await module.readSandboxStatus(1_500)).toBeUndefined(); // cached
    expect(await module.readSandboxStatus(2_100)).toEqual(status);
  });

  it("ignores a record that does not parse", async () => {
    await writeFile(path.join(dataDir, "sandbox-status.json"), JSON.stringify({ mode: "chroot" }));
    expect(await module.readSandboxStatus(10_000)).toBeUndefined();
  });
});
