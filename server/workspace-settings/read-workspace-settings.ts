/**
 * Reads a workspace's own Claude Code settings (see server/domain/workspace/workspace-settings.ts)
 * for an owner's review in the web app, and for the sidecar's check before every spawn that the
 * files are still exactly the ones an owner trusted. Each file is read only when it is a regular
 * file inside the workspace (no symlink out of it, no FIFO that would hang the request) and small.
 */
import { lstat, readFile, realpath } from "node:fs/promises";
import path from "node:path";
import {
  digestWorkspaceSettings,
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

async function readAll(rootPath: string) {
  const contents: Partial<Record<WorkspaceSettingsFile, string>> = {};
  const problems: Partial<Record<WorkspaceSettingsFile, string>> = {};
  for (const file of workspaceSettingsFiles) {
    const outcome = await readSettingsFile(rootPath, file);
    if (outcome === undefined) continue;
    if ("text" in outcome) contents[file] = outcome.text;
    else problems[file] = outcome.problem;
  }
  return { contents, problems };
}

/** What trusting the workspace at `rootPath` (a real path) would add. */
export async function reviewWorkspaceSettingsAt(rootPath: string): Promise<WorkspaceSettingsReview> {
  const { contents, problems } = await readAll(rootPath);
  return reviewWorkspaceSettings(contents, problems);
}

/**
 * True when the settings files at `rootPath` are exactly the ones whose digest an owner trusted.
 * A file that cannot be read as a regular file (a symlink out, a FIFO, too large) is never
 * trusted, whatever the digest.
 */
export async function settingsStillTrusted(rootPath: string, trustedDigest: string | null): Promise<boolean> {
  if (trustedDigest === null) return false;
  const { contents, problems } = await readAll(rootPath);
  if (Object.keys(problems).length > 0) return false;
  return (await digestWorkspaceSettings(contents)) === trustedDigest;
}
