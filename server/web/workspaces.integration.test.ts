// Workspace directories against a real database: the attack of issue 11 (a workspace inside
// another team's, `directory: "<their-slug>/src"`) is refused, and a name someone else holds gets
// the same answer as a stray directory, so a refusal does not tell which names are workspaces.
import { mkdir, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "@/server/db/client";
import type * as Workspaces from "./workspaces";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";

let fixtures: SessionFixtures;
let workspaces: typeof Workspaces;
let root: string;

beforeAll(async () => {
  fixtures = await createSessionFixtures();
  root = path.join(fixtures.dir, "workspaces");
  process.env.DATABASE_URL = fixtures.url;
  process.env.CONDUIT_DATA_DIR = fixtures.dataDir;
  process.env.CONDUIT_WORKSPACES_ROOT = root;
  workspaces = await import("./workspaces");
});
afterAll(async () => {
  await closeDb();
  await fixtures?.close();
});

describe("createWorkspace", () => {
  it("creates the directory 0700 under the root, and the root 0700", async () => {
    const created = await workspaces.createWorkspace(fixtures.owner.id, { name: "Team A", directory: "team-a" });
    expect(created.rootPath).toBe(path.join(root, "team-a"));
    expect((await stat(created.rootPath)).mode & 0o777).toBe(0o700);
    expect((await stat(root)).mode & 0o777).toBe(0o700);
  });

  it("refuses a workspace inside another one, and names another user's directory only as not available", async () => {
    const stranger = fixtures.outsider.id;
    for (const directory of ["team-a/src", "", "  ", "../team-a"]) {
      await expect(workspaces.createWorkspace(stranger, { name: "Inside", directory })).rejects.toMatchObject({ code: "invalid_payload" });
    }
    const taken = await workspaces.createWorkspace(stranger, { name: "Mine", directory: "team-a" }).catch((e: unknown) => e);
    await mkdir(path.join(root, "stray"));
    const stray = await workspaces.createWorkspace(stranger, { name: "Stray", directory: "stray" }).catch((e: unknown) => e);
    expect(taken).toMatchObject({ code: "conflict", message: workspaces.DIRECTORY_NOT_AVAILABLE });
    expect(stray).toMatchObject({ code: "conflict", message: workspaces.DIRECTORY_NOT_AVAILABLE });
    expect(await fixtures.db.workspace.count({ where: { name: { in: ["Inside", "Mine", "Stray"] } } })).toBe(0);
  });

  it("tells the owner which of their workspaces already uses the name", async () => {
    await expect(workspaces.createWorkspace(fixtures.owner.id, { name: "Again", directory: "team-a" })).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringContaining("Team A"),
    });
  });

  it("picks a free directory from the name when none is given", async () => {
    await mkdir(path.join(root, "docs"));
    const created = await workspaces.createWorkspace(fixtures.owner.id, { name: "Docs" });
    expect(created.rootPath).toBe(path.join(root, "docs-2"));
  });

  it("refuses a second workspace of the same owner under the same name (any case), and lets someone else use it", async () => {
    const again = await workspaces.createWorkspace(fixtures.owner.id, { name: "  docs " }).catch((e: unknown) => e);
    expect(again).toMatchObject({ code: "conflict", message: "You already own a workspace named “Docs”. Choose another name." });
    const theirs = await workspaces.createWorkspace(fixtures.outsider.id, { name: "Docs" });
    expect(theirs.name).toBe("Docs");
  });
});

describe("listWorkspaceActivity", () => {
  it("counts each workspace's sessions (deleted ones left out), those working now, and the latest activity", async () => {
    const team = await workspaces.createWorkspace(fixtures.owner.id, { name: "Busy", directory: "busy" });
    const quiet = await workspaces.createWorkspace(fixtures.owner.id, { name: "Quiet", directory: "quiet" });
    const session = (status: string, at: string, deleted = false) =>
      fixtures.db.session.create({
        data: {
          workspaceId: team.id,
          createdById: fixtures.owner.id,
          status,
          lastActivityAt: new Date(at),
          ...(deleted ? { deletedAt: new Date(at) } : {}),
        },
      });
    await session("running", "2026-11-01T10:00:00Z");
    await session("awaiting-approval", "2026-11-02T10:00:00Z");
    await session("stopped", "2026-11-03T10:00:00Z");
    await session("running", "2026-11-05T10:00:00Z", true);
    const activity = await workspaces.listWorkspaceActivity([team.id, quiet.id]);
    expect(activity[team.id]).toEqual({ sessions: 3, working: 2, lastActivityAt: "2026-11-03T10:00:00.000Z" });
    expect(activity[quiet.id]).toBeUndefined();
    expect(await workspaces.listWorkspaceActivity([])).toEqual({});
  });
});
