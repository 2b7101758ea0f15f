/**
 * Where a workspace's shadow repositories live: `DATA_DIR/shadow/<workspaceId>/<repoKey>.git`,
 * one folder per workspace, so that its door binds that folder and no other workspace's
 * history. Repositories of the earlier layout (`DATA_DIR/shadow/<repoKey>.git`) are moved in
 * when the folder is first prepared. Host side: the data directory is Conduit's own (no session
 * can write it), so these renames run with the process's authority.
 */
import { mkdir, readdir, rename } from "node:fs/promises";
import path from "node:path";

const idPattern = /^[A-Za-z0-9_-]{1,64}$/;

/** The shadow folder of a workspace. */
export function shadowDirOf(dataDir: string, workspaceId: string): string {
  if (!idPattern.test(workspaceId)) throw new Error("bad workspace id");
  return path.resolve(/*turbopackIgnore: true*/ dataDir, "shadow", workspaceId);
}

/** Creates the workspace's shadow folder and moves its earlier-layout repositories into it. */
export async function prepareShadowDir(shadowDir: string): Promise<void> {
  const parent = path.dirname(shadowDir);
  const workspaceId = path.basename(shadowDir);
  await mkdir(shadowDir, { recursive: true, mode: 0o700 });
  const names = await readdir(parent).catch(() => [] as string[]);
  for (const name of names) {
    if (name === `${workspaceId}.git` || (name.startsWith(`${workspaceId}-wt-`) && name.endsWith(".git"))) {
      await rename(path.join(parent, name), path.join(shadowDir, name)).catch(() => undefined);
    }
  }
}
