// /api/health says which limits hold on each session (cgroups, the rlimit fallback, or none) and
// who may start sessions, from the record the sidecar writes; the old `caps` field is kept.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxStatus } from "@/server/shared/sandbox-status";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";

let fx: SessionFixtures;
let dataDir: string;
let GET: () => Promise<Response>;

beforeAll(async () => {
  fx = await createSessionFixtures();
  dataDir = await mkdtemp(path.join(os.tmpdir(), "conduit-health-"));
  process.env.CONDUIT_DATA_DIR = dataDir;
  process.env.DATABASE_URL = fx.url;
  // no sidecar answers here: the health says so quickly
  process.env.CONDUIT_SIDECAR_UPSTREAMS = "http://127.0.0.1:9";
  ({ GET } = await import("@/app/api/health/route"));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
  await fx.close();
});

async function healthWith(status: SandboxStatus, at: number): Promise<Record<string, unknown>> {
  await writeFile(path.join(dataDir, "sandbox-status.json"), JSON.stringify(status));
  // the web app re-reads the record at most once a second
  const { readSandboxStatus } = await import("@/server/web/sandbox-status");
  await readSandboxStatus(at);
  return (await (await GET()).json()) as Record<string, unknown>;
}

describe("/api/health", () => {
  it("reports the rlimit fallback's limits and the single-tenant policy", async () => {
    const body = await healthWith(
      {
        mode: "off",
        setting: "auto",
        warning: "bubblewrap (`bwrap`) is not installed",
        at: new Date().toISOString(),
        credentialProxy: true,
        caps: {
          on: true,
          kind: "rlimit",
          memoryMb: 2048,
          pidsMax: 10240,
          limits: { memoryMb: 2048, memoryScope: "process", processes: 10240, processScope: "user", fileSizeMb: 8192 },
          reason: "cgroups: the sidecar does not run as root",
        },
        isolation: { policy: "single-tenant", diagnosis: { cause: "bwrap_missing", problem: "bubblewrap is not installed.", fix: "apt-get install bubblewrap" } },
      },
      Date.now() + 10_000,
    );
    expect(body).toMatchObject({
      ok: true,
      sandbox: "off",
      isolation: "single-tenant",
      caps: "on",
      capsBy: "rlimit",
      limits: { memoryMb: 2048, memoryScope: "process", processes: 10240, processScope: "user", fileSizeMb: 8192 },
    });
  });

  it("reports cgroups from an older record without `kind`, and no limits when off", async () => {
    const base = { mode: "bwrap", setting: "auto", at: new Date().toISOString(), credentialProxy: true } as const;
    expect(await healthWith({ ...base, caps: { on: true, memoryMb: 2048, pidsMax: 512 } }, Date.now() + 20_000)).toMatchObject({ caps: "on", capsBy: "cgroup", limits: null, isolation: "unknown" });
    expect(await healthWith({ ...base, caps: { on: false, reason: "no prlimit" }, isolation: { policy: "sandboxed" } }, Date.now() + 30_000)).toMatchObject({
      caps: "off",
      capsBy: "off",
      limits: null,
      isolation: "sandboxed",
    });
  });
});
