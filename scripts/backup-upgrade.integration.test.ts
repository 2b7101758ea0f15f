// The upgrade test: an instance made by an older Conduit (commit a0643ed, 2026-12-03, pinned as the
// backup in test/fixtures/upgrade-a0643ed; NOTES.md there says how it was made) is restored,
// migrated by today's migrations and used by today's code: the owner signs in, the history and the
// session's conversation read back, an MCP token sealed by the old instance opens, the shadow
// repository of the old layout is taken over, and the next prompt resumes the old conversation
// from its transcript with today's CLI.
import { existsSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "@/server/db/client";
import { deployMigrations, migrationStatus } from "@/server/db/migrations";
import { listSessionHistory } from "@/server/db/session-history";
import { say } from "@/server/model-server/scenario";
import { claudeTranscriptExists } from "@/server/sidecar/process/claude-transcript-exists";
import { loadWorkspaceMcpServers } from "@/server/sidecar/session/mcp-config";
import { SessionHub } from "@/server/sidecar/session/session-hub";
import { createSessionRunner } from "@/server/sidecar/session/session-runner";
import { TurnSnapshots } from "@/server/sidecar/session/turn-snapshots";
import { checkCredentials } from "@/server/web/credential-check";
import { startCliEnv, type CliEnv } from "@/test/cli-env";
import { fixtureMcpToken, fixturePassword } from "@/test/fixtures/upgrade-a0643ed/make-fixture";
import { until } from "@/test/until";
import { restoreBackup, type RestoreResult } from "./backup-core";

const projectRoot = path.resolve(import.meta.dirname, "..");
const fixture = path.join(projectRoot, "test", "fixtures", "upgrade-a0643ed", "backup");
const log = pino({ level: "silent" });

describe("an instance made by Conduit a0643ed, upgraded", () => {
  let root: string;
  let data: string;
  let url: string;
  let restored: RestoreResult;
  let db: Db;
  let cli: CliEnv | undefined;

  beforeAll(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-upgrade-")));
    data = path.join(root, "data");
    url = `file:${path.join(data, "conduit.db")}`;
    restored = await restoreBackup({ from: fixture, dataDir: data, workspacesRoot: path.join(root, "workspaces"), databaseUrl: url, root: projectRoot });
  });

  afterAll(async () => {
    await db?.$disconnect();
    await cli?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("applies today's migrations to the old database", async () => {
    expect(restored.manifest.database.migrations.at(-1)).toBe("20261201214237_cluster_nodes_and_leases");
    const before = await migrationStatus({ url, root: projectRoot });
    expect(before.upToDate).toBe(false);
    expect(before.migrations.filter((m) => m.state === "pending").map((m) => m.name)).toContain("20261203140927_approval_subagent");
    await deployMigrations({ url, root: projectRoot });
    const after = await migrationStatus({ url, root: projectRoot });
    expect(after.upToDate).toBe(true);
    expect(after.unknownApplied).toEqual([]);
  });

  it("works with today's code: sign-in, history, sealed secrets, the resumed conversation", async () => {
    db = createDb(url);
    const owner = await db.user.findFirstOrThrow({ where: { isAdmin: true } });
    expect(await checkCredentials(db, owner.email, fixturePassword)).toMatchObject({ ok: true });
    expect(await checkCredentials(db, owner.email, "not the password")).toMatchObject({ ok: false });

    const workspace = await db.workspace.findFirstOrThrow({ where: { slug: "demo" } });
    expect(workspace.rootPath).toBe(path.join(root, "workspaces", "demo"));
    const page = await listSessionHistory(db, { workspaceIds: [workspace.id] });
    expect(page.rows).toHaveLength(1);
    const session = page.rows[0]!;
    expect(session.turns).toBe(2);
    expect(await db.sessionEvent.count({ where: { sessionId: session.id, payload: { contains: "Hello from the older Conduit." } } })).toBeGreaterThan(0);
    // a column the newer migration added reads on the old rows
    expect(await db.approval.findMany({ where: { sessionId: session.id }, select: { agentId: true } })).toEqual([]);

    const [mcp] = await loadWorkspaceMcpServers(db, data, workspace.id);
    expect(mcp).toMatchObject({ name: "tracker", transport: "stdio", env: { TRACKER_TOKEN: fixtureMcpToken } });

    const row = await db.session.findUniqueOrThrow({ where: { id: session.id }, select: { claudeSessionId: true } });
    const conversation = row.claudeSessionId ?? session.id;
    expect(await claudeTranscriptExists(path.join(data, "claude-config", workspace.id), conversation)).toBe(true);

    // today's sidecar parts on the upgraded instance: the next prompt resumes the old conversation
    cli = await startCliEnv();
    cli.server.addScenario("again", [say("Still here after the upgrade.")]);
    const snapshots = new TurnSnapshots({ db, dataDir: data, log, beforeWaitMs: 20_000 });
    const hub = new SessionHub({
      db,
      turnSnapshots: snapshots,
      createRunner: (options, decidePermission) => createSessionRunner(options, { cliPath: cli!.cliPath, decidePermission, baseEnv: cli!.env }),
      configRoot: path.join(data, "claude-config"),
      sidecarId: "upgraded",
      log,
    });
    try {
      const actor = { id: owner.id, email: owner.email, name: owner.name };
      await hub.prompt(actor, session.id, "[scenario:again] are you there", "upgrade-prompt-1");
      await until(
        async () => (await db.sessionEvent.count({ where: { sessionId: session.id, payload: { contains: "Still here after the upgrade." } } })) > 0,
        60_000,
        "the resumed turn's answer",
      );
      const requests = cli.server.requests.filter((r) => r.kind === "messages" && r.scenario === "again");
      // both old turns (prompt and answer each) came back from the transcript, then the new prompt
      expect(Math.max(...requests.map((r) => r.messageCount))).toBeGreaterThanOrEqual(5);
      const after = await db.session.findUniqueOrThrow({ where: { id: session.id }, select: { claudeSessionId: true } });
      expect(after.claudeSessionId ?? session.id).toBe(conversation);
      // the shadow repository of the old layout (shadow/<workspace>.git) moved into the workspace's folder
      expect(existsSync(path.join(data, "shadow", workspace.id, `${workspace.id}.git`))).toBe(true);
      expect(await db.turnChange.count({ where: { sessionId: session.id } })).toBeGreaterThanOrEqual(2);
    } finally {
      await hub.close();
      await snapshots.close();
    }
  });
});
