/**
 * `npm run db:seed`: a sample workspace for the instance admin, so a fresh install has
 * something to open. Creates no accounts and no passwords (the first sign-up is the admin).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { closeDb, getDb } from "../server/db/client";
import { workspacesRoot } from "../server/web/workspaces";

async function main(): Promise<void> {
  const db = getDb();
  const admin = await db.user.findFirst({ where: { isAdmin: true }, orderBy: { createdAt: "asc" } });
  if (!admin) {
    console.log("seed: no account yet. Sign up first (the first account becomes the admin), then seed again.");
    return;
  }
  if (await db.workspace.findUnique({ where: { slug: "sample" } })) {
    console.log("seed: the sample workspace exists already; nothing to do.");
    return;
  }
  const rootPath = path.join(await workspacesRoot(), "sample");
  await mkdir(rootPath, { recursive: true });
  await writeFile(path.join(rootPath, "README.md"), "# Sample\n\nA workspace to try Conduit in.\n", { flag: "wx" }).catch(() => undefined);
  await db.workspace.create({
    data: { name: "Sample", slug: "sample", rootPath, memberships: { create: { userId: admin.id, role: "owner" } } },
  });
  console.log(`seed: created the sample workspace at ${rootPath} for ${admin.email}.`);
}

main()
  .catch((err: unknown) => {
    console.error(`seed failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  })
  .finally(() => void closeDb());
