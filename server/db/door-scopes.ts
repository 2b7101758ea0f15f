/**
 * The scope of a workspace's door (`server/workspace-agent`) as every caller builds it: the
 * workspace's directory with the other workspaces nested inside it hidden. One function, so
 * that the web app and the sidecar key the same door the same way.
 */
import path from "node:path";
import { filesScope, gitScope, type DoorScope } from "@/server/workspace-agent";
import type { Db } from "./client";

/** The root paths of the workspaces that lie inside `rootPath`. */
export async function nestedWorkspaceRoots(db: Db, rootPath: string): Promise<string[]> {
  const prefix = rootPath.endsWith(path.sep) ? rootPath : rootPath + path.sep;
  const nested = await db.workspace.findMany({ where: { rootPath: { startsWith: prefix } }, select: { rootPath: true } });
  return nested.map((w) => w.rootPath);
}

/** The files door (`files`) or the git door (`git`) of the workspace `ws`; a missing directory is `not_found`. */
export async function workspaceDoorScope(db: Db, ws: { id: string; rootPath: string }, purpose: "files" | "git"): Promise<DoorScope> {
  const ref = { id: ws.id, rootPath: ws.rootPath, excluded: await nestedWorkspaceRoots(db, ws.rootPath) };
  return purpose === "files" ? filesScope(ref) : gitScope(ref);
}
