/**
 * One level of a workspace folder for the file tree: folders first, then files, by name;
 * `.gitignore`d entries and heavy folders (`node_modules`, `.git`, …) marked so the browser
 * shows them collapsed and never expands them on its own.
 */
import type { DirEntry, DirListing } from "@/server/shared/wire/files";
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { isIgnored, parseGitignore, type IgnoreRules } from "./gitignore";
import { isInside, relativeTo, resolveExisting, type WorkspaceRoot } from "./workspace-path";

/** Folders too big or too generated to walk unasked (also skipped by name search). */
export const heavyDirectoryNames: ReadonlySet<string> = new Set([
  "node_modules",
  ".git",
  "dist",
  ".next",
  "build",
  "out",
  "target",
  ".venv",
  "venv",
  "__pycache__",
  ".cache",
  "coverage",
  ".turbo",
  ".gradle",
  // sessions' own git worktrees (server/workspace-git/session-worktree.ts): whole checkouts
  ".conduit",
]);

/** The most entries one listing returns; the rest are counted, not sent. */
export const maxListEntries = 10_000;

export type { DirEntry, DirListing } from "@/server/shared/wire/files";

/** The `.gitignore` rules that apply inside `relDir` (root's first), read fresh each time. */
export async function loadIgnoreRules(root: string, relDir: string): Promise<IgnoreRules[]> {
  const parts = relDir === "" ? [] : relDir.split("/");
  const files: IgnoreRules[] = [];
  for (let i = 0; i <= parts.length; i++) {
    const base = parts.slice(0, i).join("/");
    const text = await readFile(path.join(root, base, ".gitignore"), "utf8").catch(() => undefined);
    if (text !== undefined) files.push(parseGitignore(base, text));
  }
  return files;
}

const kindOrder = (e: DirEntry) => (e.kind === "dir" || (e.kind === "symlink" && e.target === "dir") ? 0 : 1);

/** Lists one folder of the workspace. */
export async function listWorkspaceDirectory(ws: WorkspaceRoot, rel: string, limit = maxListEntries): Promise<DirListing> {
  const { root, real } = await resolveExisting(ws, rel);
  const st = await stat(real);
  if (!st.isDirectory()) throw new AppError(ErrorCode.invalidPayload, `${rel} is not a folder.`);
  const relDir = relativeTo(root, real);
  const dirents = await readdir(real, { withFileTypes: true });
  const ignoreRules = await loadIgnoreRules(root, relDir);
  const excluded = ws.excluded ?? [];
  const entries: DirEntry[] = [];
  for (const d of dirents) {
    const entryPath = relDir === "" ? d.name : `${relDir}/${d.name}`;
    const full = path.join(real, d.name);
    if (excluded.some((other) => isInside(other, full))) continue;
    const kind = d.isDirectory() ? "dir" : d.isFile() ? "file" : d.isSymbolicLink() ? "symlink" : "other";
    const entry: DirEntry = { name: d.name, path: entryPath, kind };
    entries.push(entry);
  }
  entries.sort((a, b) => kindOrder(a) - kindOrder(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const shown = entries.slice(0, limit);
  await Promise.all(
    shown.map(async (entry) => {
      const full = path.join(real, entry.name);
      if (entry.kind === "symlink") {
        const target = await realpath(full).catch(() => undefined);
        if (!target || !isInside(root, target) || excluded.some((o) => isInside(o, target))) entry.broken = true;
        else {
          const ts = await stat(target).catch(() => undefined);
          entry.target = ts?.isDirectory() ? "dir" : ts?.isFile() ? "file" : "other";
        }
      } else if (entry.kind === "file" && shown.length <= 2000) {
        entry.size = (await stat(full).catch(() => undefined))?.size;
      }
      const isDir = entry.kind === "dir" || entry.target === "dir";
      if (isDir && heavyDirectoryNames.has(entry.name)) entry.heavy = true;
      if (ignoreRules.length > 0 && isIgnored(entry.path, isDir, ignoreRules)) entry.ignored = true;
    }),
  );
  // symlinked folders sort with folders once their target is known
  shown.sort((a, b) => kindOrder(a) - kindOrder(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { path: relDir, entries: shown, total: entries.length, truncated: entries.length > shown.length };
}
