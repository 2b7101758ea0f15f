// A migrated temp SQLite database with a workspace and one member of each role (plus an
// outsider), for the session hub's and the session sockets' tests and the relay benchmark.
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createDb, type Db } from "@/server/db/client";
import { deployMigrations } from "@/server/db/migrations";

export interface TestUser {
  id: string;
  email: string;
  name: string;
}

export interface SessionFixtures {
  db: Db;
  url: string;
  /** Temp root: holds the database, the workspace directory and the data dir. */
  dir: string;
  dataDir: string;
  workspace: { id: string; slug: string; rootPath: string; allowBypass: boolean; defaultMode: string };
  owner: TestUser;
  editor: TestUser;
  viewer: TestUser;
  outsider: TestUser;
  close(): Promise<void>;
}

/** Creates and seeds the database. `rootPath` defaults to a fresh directory under the temp root. */
export async function createSessionFixtures(
  options: { rootPath?: string; allowBypass?: boolean; slug?: string; url?: string } = {},
): Promise<SessionFixtures> {
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-sessions-")));
  // `url`: another database (a scratch PostgreSQL one for cluster tests); else a temp SQLite file.
  const url = options.url ?? `file:${path.join(dir, "conduit.db")}`;
  await deployMigrations({ url });
  const db = createDb(url);
  const rootPath = options.rootPath ?? path.join(dir, "workspace");
  const dataDir = path.join(dir, "data");
  await mkdir(rootPath, { recursive: true });
  await mkdir(dataDir, { recursive: true });
  const user = (name: string) =>
    db.user.create({ data: { email: `${name}@example.test`, name }, select: { id: true, email: true, name: true } });
  const [owner, editor, viewer, outsider] = await Promise.all([user("Olga"), user("Ed"), user("Vera"), user("Otto")]);
  const workspace = await db.workspace.create({
    data: { name: "Demo", slug: options.slug ?? "demo", rootPath, allowBypass: options.allowBypass ?? false },
    select: { id: true, slug: true, rootPath: true, allowBypass: true, defaultMode: true },
  });
  await db.membership.createMany({
    data: [
      { workspaceId: workspace.id, userId: owner.id, role: "owner" },
      { workspaceId: workspace.id, userId: editor.id, role: "editor" },
      { workspaceId: workspace.id, userId: viewer.id, role: "viewer" },
    ],
  });
  return {
    db,
    url,
    dir,
    dataDir,
    workspace,
    owner,
    editor,
    viewer,
    outsider,
    async close() {
      await db.$disconnect();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
