/**
 * The sidecar's files door of a workspace (`server/workspace-agent`): its directory, with the
 * other workspaces nested inside it hidden, as the web app's Files pane sees it. The settings
 * check before every spawn and the approval card's reads go through it.
 */
import { workspaceDoorScope } from "@/server/db/door-scopes";
import type { Db } from "@/server/db/client";
import type { DoorScope } from "@/server/workspace-agent";

/** The files door's scope of the workspace `ws` (its directory must exist: else `not_found`). */
export function workspaceFilesScope(db: Db, ws: { id: string; rootPath: string }): Promise<DoorScope> {
  return workspaceDoorScope(db, ws, "files");
}
