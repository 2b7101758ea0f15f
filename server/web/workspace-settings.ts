/**
 * Reads a workspace's own Claude Code settings for an owner's review (see
 * server/domain/workspace/workspace-settings.ts). Each file is read only when it is a regular
 * file inside the workspace (no symlink out of it, no FIFO that would hang the request) and small.
 */
import { lstat, readFile, realpath } from "node:fs/promises";
import path from "node:path";
import {
  reviewWorkspaceSettings,
  workspaceSettingsFiles,
  type WorkspaceSettingsFile,
  type WorkspaceSettingsReview,
} from "@/server/domain/workspace/workspace-settings";

/** Larger settings files are reported, not read. */
export const maxSettingsFileBytes = 256 * 1024;

type ReadOutcome = { text: string } | { problem: string } | undefined;

async function readSettingsFile(rootPath: string, file: WorkspaceSettingsFile): Promise<ReadOutcome> {
  const target = path.join(rootPath, file);
  let info;
  try {
    info = await lstat(/*turbopackIgnore: true*/ target);
  } catch {
    return undefined;
  }
  if (info.isSymbolicLink()) {
    const real = await realpath(/*turbopackIgnore: true*/ target).catch(() => undefined);
    const rel = real === undefined ? ".." : path.relative(rootPath, real);
    if (rel.startsWith("..") || path.isAbsolute(rel)) return { problem: "a symlink that leads outside the workspace (not read)" };
    info = await lstat(/*turbopackIgnore: true*/ real as string);
  }
  if (!info.isFile()) return { problem: "not a regular file (not read)" };
  if (info.size > maxSettingsFileBytes) return { problem: `larger than ${maxSettingsFileBytes} bytes (not read)` };
  return { text: await readFile(/*turbopackIgnore: true*/ target, "utf8") };
}

/** What trusting the workspace at `rootPath` (a real path) would add. */
export async function reviewWorkspaceSettingsAt(rootPath: string): Promise<WorkspaceSettingsReview> {
  const contents: Partial<Record<WorkspaceSettingsFile, string>> = {};
  const problems: Partial<Record<WorkspaceSettingsFile, string>> = {};
  for (const file of workspaceSettingsFiles) {
    const outcome = await readSettingsFile(rootPath, file);
    if (outcome === undefined) continue;
    if ("text" in outcome) contents[file] = outcome.text;
    else problems[file] = outcome.problem;
  }
  return reviewWorkspaceSettings(contents, problems);
}
