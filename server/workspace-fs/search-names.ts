/**
 * File-name search over a workspace, bounded: breadth-first, skipping heavy and `.gitignore`d
 * folders and symlinks (no loops, no escapes), stopping at a result count, a number of folders
 * read and a time budget, and saying so when it stopped early.
 */
import type { NameMatch, NameSearchResult } from "@/server/shared/wire/files";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { isIgnored, parseGitignore, type IgnoreRules } from "./gitignore";
import { heavyDirectoryNames, loadIgnoreRules } from "./list-directory";
import { isInside, realRoot, type WorkspaceRoot } from "./workspace-path";

export interface NameSearchLimits {
  maxResults: number;
  maxDirectories: number;
  budgetMs: number;
}

/** Folders read at once. */
const readBatch = 32;

export const defaultNameSearchLimits: NameSearchLimits = { maxResults: 200, maxDirectories: 20_000, budgetMs: 500 };

export type { NameMatch, NameSearchResult } from "@/server/shared/wire/files";

/**
 * Paths whose file name contains `query` (case-insensitive), shallow paths first. A query with
 * a `/` matches against the whole relative path instead.
 */
export async function searchWorkspaceNames(
  ws: WorkspaceRoot,
  query: string,
  limits: NameSearchLimits = defaultNameSearchLimits,
  now: () => number = () => performance.now(),
): Promise<NameSearchResult> {
  const root = await realRoot(ws);
  const needle = query.trim().toLowerCase();
  const byPath = needle.includes("/");
  const deadline = now() + limits.budgetMs;
  const matches: NameMatch[] = [];
  const excluded = ws.excluded ?? [];
  const queue: { rel: string; rules: IgnoreRules[] }[] = [{ rel: "", rules: await loadIgnoreRules(root, "") }];
  let directories = 0;
  // Folders are read a batch at a time (in parallel) but handled in queue order, so the
  // results do not depend on which read finished first.
  let head = 0;
  while (head < queue.length) {
    if (now() > deadline) return { matches, stopped: "time" };
    if (directories >= limits.maxDirectories) return { matches, stopped: "directories" };
    const batch = queue.slice(head, head + Math.min(readBatch, limits.maxDirectories - directories));
    head += batch.length;
    directories += batch.length;
    const listed = await Promise.all(batch.map(({ rel }) => readdir(path.join(root, rel), { withFileTypes: true }).catch(() => [])));
    for (let i = 0; i < batch.length; i++) {
      const { rel, rules } = batch[i]!;
      const dirents = listed[i]!;
      let childRules = rules;
      if (rel !== "" && dirents.some((d) => d.name === ".gitignore" && d.isFile())) {
        const text = await readFile(path.join(root, rel, ".gitignore"), "utf8").catch(() => "");
        childRules = [...rules, parseGitignore(rel, text)];
      }
      dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const d of dirents) {
        const isDir = d.isDirectory();
        if (!isDir && !d.isFile()) continue;
        if (isDir && heavyDirectoryNames.has(d.name)) continue;
        const entryPath = rel === "" ? d.name : `${rel}/${d.name}`;
        if (childRules.length > 0 && isIgnored(entryPath, isDir, childRules)) continue;
        if (isDir && excluded.length > 0 && excluded.some((o) => isInside(o, path.join(root, entryPath)))) continue;
        const haystack = byPath ? entryPath.toLowerCase() : d.name.toLowerCase();
        if (needle !== "" && haystack.includes(needle)) {
          matches.push({ path: entryPath, kind: isDir ? "dir" : "file" });
          if (matches.length >= limits.maxResults) return { matches, stopped: "results" };
        }
        if (isDir) queue.push({ rel: entryPath, rules: childRules });
      }
    }
  }
  return { matches };
}
