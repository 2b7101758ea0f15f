/**
 * The Files pane and every other read or write of a workspace's files on a person's or the
 * approval card's behalf, run inside the door.
 */
import { z } from "zod";
import { readFileVersion, readWorkspaceFile } from "@/server/workspace-fs/file-content";
import { listWorkspaceDirectory } from "@/server/workspace-fs/list-directory";
import { locateInWorkspace } from "@/server/workspace-fs/locate-in-workspace";
import { readReviewFile } from "@/server/workspace-fs/read-review-file";
import { searchWorkspaceNames } from "@/server/workspace-fs/search-names";
import { parseRelativePath, resolveExisting } from "@/server/workspace-fs/workspace-path";
import { createWorkspaceEntry, deleteWorkspaceEntry, renameWorkspaceEntry, saveWorkspaceFile } from "@/server/workspace-fs/write-file";
import { reviewWorkspaceSettingsAt, settingsStillTrusted } from "@/server/workspace-settings/read-workspace-settings";
import { defineOp, workspaceOf } from "./define";

const rel = z.string().max(4096);
const content = z.string().max(6 * 1024 * 1024);

export const fileOps = {
  /** Nothing: a round trip (the benches' `door_roundtrip_p50_ms`, a liveness check). */
  "door.ping": defineOp("files", z.object({}), async () => ({ pid: process.pid })),
  "files.list": defineOp("files", z.object({ path: rel, limit: z.number().int().positive().optional() }), (i, ctx) =>
    listWorkspaceDirectory(workspaceOf(ctx), i.path, i.limit),
  ),
  "files.search": defineOp("files", z.object({ query: z.string().max(1000) }), (i, ctx) => searchWorkspaceNames(workspaceOf(ctx), i.query)),
  "files.read": defineOp("files", z.object({ path: rel, maxBytes: z.number().int().positive().optional() }), (i, ctx) =>
    readWorkspaceFile(workspaceOf(ctx), i.path, i.maxBytes),
  ),
  "files.version": defineOp("files", z.object({ path: rel }), (i, ctx) => readFileVersion(workspaceOf(ctx), i.path)),
  "files.save": defineOp("files", z.object({ path: rel, content, baseVersion: z.string().max(128).nullable() }), (i, ctx) =>
    saveWorkspaceFile(workspaceOf(ctx), i.path, i.content, i.baseVersion),
  ),
  "files.create": defineOp("files", z.object({ path: rel, kind: z.enum(["file", "dir"]), content }), (i, ctx) =>
    createWorkspaceEntry(workspaceOf(ctx), i.path, i.kind, i.content),
  ),
  "files.rename": defineOp("files", z.object({ from: rel, to: rel }), (i, ctx) => renameWorkspaceEntry(workspaceOf(ctx), i.from, i.to)),
  "files.delete": defineOp("files", z.object({ path: rel }), (i, ctx) => deleteWorkspaceEntry(workspaceOf(ctx), i.path)),
  /** A file the CLI wants to change (a path it named, absolute or relative), for the approval card. */
  "files.readForReview": defineOp("files", z.object({ filePath: z.string().max(8192), maxBytes: z.number().int().positive().optional() }), async (i, ctx) => {
    const located = await locateInWorkspace(workspaceOf(ctx).root, i.filePath);
    if (!located.ok) return { located: false as const, problem: located.problem };
    return { located: true as const, path: located.path, read: await readReviewFile(located.path, i.maxBytes) };
  }),
  "settings.review": defineOp("files", z.object({}), (_i, ctx) => reviewWorkspaceSettingsAt(workspaceOf(ctx).root)),
  /** `under`: a folder of the workspace holding the files instead of its root (a session's git worktree). */
  "settings.stillTrusted": defineOp("files", z.object({ trustedDigest: z.string().max(256).nullable(), under: rel.optional() }), async (i, ctx) => {
    const ws = workspaceOf(ctx);
    if (i.under === undefined || i.under === "") return settingsStillTrusted(ws.root, i.trustedDigest);
    // Contained (no link out, no nested workspace); a folder that is not there trusts nothing.
    const at = await resolveExisting(ws, parseRelativePath(i.under)).catch(() => undefined);
    return at === undefined ? false : settingsStillTrusted(at.real, i.trustedDigest);
  }),
};
