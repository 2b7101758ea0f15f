"use client";

import { memo } from "react";
import type { DirEntry, DirListing } from "./files-api";

/** How many entries of one folder are drawn at first, and per "show more". */
export const treePageSize = 500;

export interface DirState {
  listing?: DirListing;
  error?: string;
  loading: boolean;
  /** entries drawn so far */
  shown: number;
}

export interface FileTreeProps {
  dirs: Readonly<Record<string, DirState>>;
  expanded: ReadonlySet<string>;
  selected: string | undefined;
  openPath: string | undefined;
  onToggle(path: string): void;
  onOpen(path: string): void;
  onSelect(path: string): void;
  onShowMore(dir: string): void;
  onRetry(dir: string): void;
}

const isDir = (e: DirEntry) => e.kind === "dir" || (e.kind === "symlink" && e.target === "dir");

/**
 * A lazy tree: a folder's entries are fetched when it is first opened, and at most
 * `shown` of them are drawn (thousands of rows would stall the page).
 */
export function FileTree(props: FileTreeProps) {
  return (
    <ul role="tree" aria-label="Workspace files" className="text-sm">
      <DirChildren {...props} dir="" depth={0} />
    </ul>
  );
}

function DirChildren(props: FileTreeProps & { dir: string; depth: number }) {
  const { dirs, dir, depth } = props;
  const state = dirs[dir];
  const pad = { paddingLeft: `${depth * 12 + 8}px` };
  if (!state || (state.loading && !state.listing)) {
    return (
      <li role="none" className="py-0.5 text-xs text-zinc-400" style={pad}>
        loading…
      </li>
    );
  }
  if (state.error && !state.listing) {
    return (
      <li role="none" className="py-0.5 text-xs text-red-600" style={pad}>
        {state.error}{" "}
        <button type="button" className="underline" onClick={() => props.onRetry(dir)}>
          retry
        </button>
      </li>
    );
  }
  const listing = state.listing!;
  const drawn = listing.entries.slice(0, state.shown);
  const hiddenHere = listing.entries.length - drawn.length;
  const notSent = listing.total - listing.entries.length;
  return (
    <>
      {listing.entries.length === 0 && (
        <li role="none" className="py-0.5 text-xs text-zinc-400" style={pad}>
          empty
        </li>
      )}
      {drawn.map((entry) => (
        <TreeRow key={entry.path} {...props} entry={entry} depth={depth} />
      ))}
      {hiddenHere > 0 && (
        <li role="none" style={pad}>
          <button
            type="button"
            data-testid="file-tree-more"
            className="py-0.5 text-xs text-sky-700 hover:underline dark:text-sky-400"
            onClick={() => props.onShowMore(dir)}
          >
            show {Math.min(hiddenHere, treePageSize)} more of {hiddenHere}
          </button>
        </li>
      )}
      {notSent > 0 && hiddenHere === 0 && (
        <li role="none" className="py-0.5 text-xs text-zinc-500" style={pad}>
          {notSent} more entries not listed; use search to find them
        </li>
      )}
    </>
  );
}

const TreeRow = memo(function TreeRow(props: FileTreeProps & { entry: DirEntry; depth: number }) {
  const { entry, depth, expanded, selected, openPath } = props;
  const folder = isDir(entry);
  const open = folder && expanded.has(entry.path);
  const marked = entry.heavy || entry.ignored;
  return (
    <li role="treeitem" aria-expanded={folder ? open : undefined} aria-selected={selected === entry.path}>
      <button
        type="button"
        data-testid="file-tree-item"
        data-path={entry.path}
        data-kind={folder ? "dir" : "file"}
        data-heavy={entry.heavy ? "true" : undefined}
        data-ignored={entry.ignored ? "true" : undefined}
        title={entry.broken ? "a link that leads outside the workspace or nowhere" : entry.path}
        className={`flex w-full items-center gap-1 truncate rounded px-1 py-0.5 text-left hover:bg-zinc-100 dark:hover:bg-zinc-800 ${
          selected === entry.path ? "bg-sky-100 dark:bg-sky-900/40" : ""
        } ${openPath === entry.path ? "font-medium" : ""} ${marked || entry.broken ? "text-zinc-400" : ""}`}
        style={{ paddingLeft: `${depth * 12 + 4}px` }}
        onClick={() => {
          props.onSelect(entry.path);
          if (folder) props.onToggle(entry.path);
          else if (!entry.broken && entry.kind !== "other") props.onOpen(entry.path);
        }}
      >
        <span aria-hidden className="w-3 shrink-0 text-xs text-zinc-400">
          {folder ? (open ? "▾" : "▸") : ""}
        </span>
        <span className="truncate">{entry.name}</span>
        {entry.kind === "symlink" && <span className="text-xs text-zinc-400">↪</span>}
        {entry.heavy && (
          <span className="rounded bg-zinc-200 px-1 text-[10px] text-zinc-600 dark:bg-zinc-700 dark:text-zinc-300">
            heavy
          </span>
        )}
        {entry.ignored && !entry.heavy && (
          <span className="rounded bg-zinc-200 px-1 text-[10px] text-zinc-600 dark:bg-zinc-700 dark:text-zinc-300">
            ignored
          </span>
        )}
      </button>
      {open && (
        <ul role="group">
          <DirChildren {...props} dir={entry.path} depth={depth + 1} />
        </ul>
      )}
    </li>
  );
});
