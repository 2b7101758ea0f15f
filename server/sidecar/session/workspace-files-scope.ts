/**
 * The sidecar's files door of a workspace (`server/workspace-agent`): its directory, with the
 * other workspaces nested inside it hidden, as the web app's Files pane sees it. The settings
 * check before every spawn and the approval card's reads go through it.
 */
import path from "node:path";
import type { Db } from "@/server/db/client";
import { filesScope, type DoorScope } from "@/server/workspace-agent";

/** The files door's scope of the workspace `ws` (its directory must exist: else `not_found`). */
export async function workspaceFilesScope(db: Db, ws: { id: string; rootPath: string }): Promise<DoorScope> {
  const prefix = ws.rootPath.endsWith(path.sep) ? ws.rootPath : ws.rootPath + path.sep;
  const nested = await db.workspace.findMany({ where: { rootPath: { startsWith: prefix } }, select: { rootPath: true } });
  return filesScope({ id: ws.id, rootPath: ws.rootPath, excluded: nested.map((w) => w.rootPath) });
}
