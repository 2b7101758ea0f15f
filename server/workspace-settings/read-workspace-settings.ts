/**
 * Reads a workspace's own Claude Code settings and the skills, commands, agents and other trees
 * under `.claude/` (see server/domain/workspace/workspace-settings.ts) for an owner's review in
 * the web app, and for the sidecar's check before every spawn that the files are still exactly
 * the ones an owner trusted. Runs inside the workspace door. Each file is read only when it is a
 * regular file inside the workspace (no symlink out of it, no FIFO that would hang the request)
 * and small; a tree holding a symlinked folder, or more files or bytes than the limits, is
 * reported (and so never trusted), not read.
 */
import { createHash } from "node:crypto";
import { lstat, readdir, readFile, realpath } from "node:fs/promises";
import path from "node:path";
import {
  digestWorkspaceSettings,
  reviewWorkspaceSettings,
  workspaceConfigDirs,
  workspaceSettingsFiles,
  type WorkspaceSettingsFile,
  type WorkspaceSettingsReview,
} from "@/server/domain/workspace/workspace-settings";

/** Larger settings files are reported, not read. */
export const maxSettingsFileBytes = 256 * 1024;
/** Limits over all the trees of `workspaceConfigDirs` together; beyond them the tree is reported, not read. */
export const configTreeLimits = { files: 500, bytes: 8 * 1024 * 1024, depth: 8 } as const;

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

function inside(rootPath: string, real: string): boolean {
  const rel = path.relative(rootPath, real);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** A file's content for the digest: its text, or (not valid UTF-8) a stand-in naming its bytes' sha256. */
function digestText(bytes: Buffer): string {
  const text = bytes.toString("utf8");
  return Buffer.from(text, "utf8").equals(bytes) ? text : `\u0000binary sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

interface TreeRead {
  definitions: Record<string, string>;
  problems: Record<string, string>;
  files: number;
  bytes: number;
}

/** Reads every file of one tree (`rel`, relative to the root, POSIX separators) into `read`. */
async function readTree(rootPath: string, rel: string, depth: number, read: TreeRead): Promise<void> {
  let info;
  try {
    info = await lstat(/*turbopackIgnore: true*/ path.join(rootPath, rel));
  } catch {
    return;
  }
  if (info.isSymbolicLink()) {
    const real = await realpath(/*turbopackIgnore: true*/ path.join(rootPath, rel)).catch(() => undefined);
    if (real === undefined || !inside(rootPath, real)) {
      read.problems[rel] = "a symlink that leads outside the workspace (not read)";
      return;
    }
    info = await lstat(/*turbopackIgnore: true*/ real);
    if (info.isDirectory()) {
      read.problems[rel] = "a symlinked folder (not read)";
      return;
    }
  }
  if (info.isDirectory()) {
    if (depth >= configTreeLimits.depth) {
      read.problems[rel] = `nested deeper than ${configTreeLimits.depth} folders (not read)`;
      return;
    }
    const names = (await readdir(/*turbopackIgnore: true*/ path.join(rootPath, rel))).sort();
    for (const name of names) {
      if (read.files >= configTreeLimits.files) {
        read.problems[rel] = `more than ${configTreeLimits.files} files under ${workspaceConfigDirs.join(", ")} (not read)`;
        return;
      }
      await readTree(rootPath, `${rel}/${name}`, depth + 1, read);
    }
    return;
  }
  if (!info.isFile()) {
    read.problems[rel] = "not a regular file (not read)";
    return;
  }
  read.files += 1;
  if (info.size > maxSettingsFileBytes) {
    read.problems[rel] = `larger than ${maxSettingsFileBytes} bytes (not read)`;
    return;
  }
  read.bytes += info.size;
  if (read.bytes > configTreeLimits.bytes) {
    read.problems[rel] = `the files under ${workspaceConfigDirs.join(", ")} hold more than ${configTreeLimits.bytes} bytes (not read)`;
    return;
  }
  read.definitions[rel] = digestText(await readFile(/*turbopackIgnore: true*/ path.join(rootPath, rel)));
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
  const tree: TreeRead = { definitions: {}, problems: {}, files: 0, bytes: 0 };
  // `.claude` itself a link out of the workspace: the settings files above say so already; the
  // trees are reported too (the CLI would follow it).
  const claudeDir = await realpath(/*turbopackIgnore: true*/ path.join(rootPath, ".claude")).catch(() => undefined);
  if (claudeDir !== undefined && !inside(rootPath, claudeDir)) tree.problems[".claude"] = "a symlink that leads outside the workspace (not read)";
  else if (claudeDir !== undefined && (await lstat(/*turbopackIgnore: true*/ path.join(rootPath, ".claude"))).isSymbolicLink()) tree.problems[".claude"] = "a symlinked folder (not read)";
  else for (const dir of workspaceConfigDirs) await readTree(rootPath, dir, 0, tree);
  return { contents, problems, definitions: tree.definitions, definitionProblems: tree.problems };
}

/** What trusting the workspace at `rootPath` (a real path) would add. */
export async function reviewWorkspaceSettingsAt(rootPath: string): Promise<WorkspaceSettingsReview> {
  const { contents, problems, definitions, definitionProblems } = await readAll(rootPath);
  return reviewWorkspaceSettings(contents, problems, definitions, definitionProblems);
}

/**
 * True when the settings files and the trees at `rootPath` are exactly the ones whose digest an
 * owner trusted. A file that cannot be read as a regular file (a symlink out, a FIFO, too large),
 * or a tree beyond the limits, is never trusted, whatever the digest.
 */
export async function settingsStillTrusted(rootPath: string, trustedDigest: string | null): Promise<boolean> {
  if (trustedDigest === null) return false;
  const { contents, problems, definitions, definitionProblems } = await readAll(rootPath);
  if (Object.keys(problems).length > 0 || Object.keys(definitionProblems).length > 0) return false;
  return (await digestWorkspaceSettings(contents, definitions)) === trustedDigest;
}
