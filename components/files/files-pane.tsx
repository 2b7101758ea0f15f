"use client";

import { useCallback, useEffect, useRef, useState, type FormEvent } from "react";
import { FileEditor } from "./file-editor";
import { FileTree, treePageSize, type DirState } from "./file-tree";
import { filesApi, parentOf, type NameSearchResult } from "./files-api";

type Pending = { kind: "new-file" | "new-dir" | "rename"; value: string } | { kind: "delete" };

/**
 * The workspace's files: a lazy tree, name search, the open file in Monaco, and for owners and
 * editors create, rename and delete (delete asks first).
 */
export function FilesPane({
  slug,
  canWrite,
  className,
  initialPath,
}: {
  slug: string;
  canWrite: boolean;
  className?: string;
  /** A file to open at once (a tool card's "Open in Files"), relative to the workspace root. */
  initialPath?: string;
}) {
  const [dirs, setDirs] = useState<Record<string, DirState>>({});
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const [selected, setSelected] = useState<string>();
  const [openPath, setOpenPath] = useState<string>();
  const [query, setQuery] = useState("");
  const [results, setResults] = useState<NameSearchResult>();
  const [searchError, setSearchError] = useState<string>();
  const [pending, setPending] = useState<Pending>();
  const [actionError, setActionError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const selectedKind = useRef<Record<string, "dir" | "file">>({});

  const loadDir = useCallback(
    async (dir: string) => {
      setDirs((d) => ({ ...d, [dir]: { ...d[dir], loading: true, shown: d[dir]?.shown ?? treePageSize } }));
      try {
        const listing = await filesApi.list(slug, dir);
        for (const e of listing.entries)
          selectedKind.current[e.path] = e.kind === "dir" || e.target === "dir" ? "dir" : "file";
        setDirs((d) => ({ ...d, [dir]: { listing, loading: false, shown: d[dir]?.shown ?? treePageSize } }));
      } catch (err) {
        setDirs((d) => ({
          ...d,
          [dir]: {
            ...d[dir],
            loading: false,
            shown: d[dir]?.shown ?? treePageSize,
            error: err instanceof Error ? err.message : String(err),
          },
        }));
      }
    },
    [slug],
  );

  useEffect(() => {
    // the tree's first level, once; deeper levels load when opened
    void loadDir("");
  }, [loadDir]);

  const toggle = useCallback(
    (path: string) => {
      setExpanded((prev) => {
        const next = new Set(prev);
        if (next.has(path)) next.delete(path);
        else next.add(path);
        return next;
      });
      if (!dirs[path]?.listing) void loadDir(path);
    },
    [dirs, loadDir],
  );

  // name search, debounced; an older answer never replaces a newer one
  useEffect(() => {
    const q = query.trim();
    if (q === "") return;
    const abort = new AbortController();
    const timer = setTimeout(() => {
      filesApi.search(slug, q, abort.signal).then(
        (r) => {
          setResults(r);
          setSearchError(undefined);
        },
        (err: unknown) => {
          if (!abort.signal.aborted) setSearchError(err instanceof Error ? err.message : String(err));
        },
      );
    }, 200);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [slug, query]);

  const reveal = useCallback(
    (path: string, kind: "dir" | "file") => {
      const parts = path.split("/");
      const chain = parts
        .slice(0, kind === "dir" ? parts.length : parts.length - 1)
        .map((_, i) => parts.slice(0, i + 1).join("/"));
      setExpanded((prev) => new Set([...prev, ...chain]));
      for (const dir of chain) if (!dirs[dir]?.listing) void loadDir(dir);
      setSelected(path);
      selectedKind.current[path] = kind;
      if (kind === "file") setOpenPath(path);
    },
    [dirs, loadDir],
  );

  // Opened for one file (the pane is keyed by the request): reveal it once.
  const revealed = useRef(false);
  useEffect(() => {
    if (!initialPath || revealed.current) return;
    revealed.current = true;
    reveal(initialPath, "file");
  }, [initialPath, reveal]);

  const targetDir =
    selected === undefined ? "" : selectedKind.current[selected] === "dir" ? selected : parentOf(selected);

  async function submitPending(event?: FormEvent) {
    event?.preventDefault();
    if (!pending) return;
    setBusy(true);
    setActionError(undefined);
    try {
      if (pending.kind === "delete" && selected) {
        await filesApi.remove(slug, selected);
        if (openPath && (openPath === selected || openPath.startsWith(`${selected}/`))) setOpenPath(undefined);
        await loadDir(parentOf(selected));
        setSelected(undefined);
      } else if (pending.kind === "rename" && selected) {
        const to = pending.value.trim();
        await filesApi.rename(slug, selected, to);
        if (openPath === selected) setOpenPath(to);
        await Promise.all([loadDir(parentOf(selected)), loadDir(parentOf(to))]);
        setSelected(to);
      } else if (pending.kind === "new-file" || pending.kind === "new-dir") {
        const name = pending.value.trim();
        const path = targetDir === "" ? name : `${targetDir}/${name}`;
        await filesApi.create(slug, path, pending.kind === "new-dir" ? "dir" : "file");
        await loadDir(parentOf(path));
        reveal(path, pending.kind === "new-dir" ? "dir" : "file");
      }
      setPending(undefined);
    } catch (err) {
      setActionError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  const searching = query.trim() !== "";
  return (
    <section
      data-testid="files-pane"
      aria-label="Files"
      className={`flex flex-col gap-3 md:flex-row ${className ?? ""}`}
    >
      <div className="flex w-full shrink-0 flex-col gap-2 md:w-72">
        <input
          data-testid="file-search"
          type="search"
          className="field"
          placeholder="Find a file by name"
          aria-label="Find a file by name"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        {canWrite && (
          <div className="flex flex-wrap gap-1 text-xs">
            <button
              type="button"
              data-testid="file-new-file"
              className="btn-quiet px-2 py-1 text-xs"
              onClick={() => setPending({ kind: "new-file", value: "" })}
            >
              New file
            </button>
            <button
              type="button"
              data-testid="file-new-folder"
              className="btn-quiet px-2 py-1 text-xs"
              onClick={() => setPending({ kind: "new-dir", value: "" })}
            >
              New folder
            </button>
            <button
              type="button"
              data-testid="file-rename"
              className="btn-quiet px-2 py-1 text-xs"
              disabled={!selected}
              onClick={() => selected && setPending({ kind: "rename", value: selected })}
            >
              Rename
            </button>
            <button
              type="button"
              data-testid="file-delete"
              className="btn-quiet px-2 py-1 text-xs"
              disabled={!selected}
              onClick={() => setPending({ kind: "delete" })}
            >
              Delete
            </button>
          </div>
        )}
        {pending && pending.kind !== "delete" && (
          <form
            onSubmit={submitPending}
            className="flex gap-1"
            onKeyDown={(e) => e.key === "Escape" && setPending(undefined)}
          >
            <input
              data-testid="file-name-input"
              autoFocus
              className="field py-1"
              aria-label={
                pending.kind === "rename"
                  ? "New path"
                  : `Name of the new ${pending.kind === "new-dir" ? "folder" : "file"} in ${targetDir || "the root"}`
              }
              placeholder={pending.kind === "rename" ? "new/path" : `name in ${targetDir || "/"}`}
              value={pending.value}
              onChange={(e) => setPending({ ...pending, value: e.target.value })}
            />
            <button
              type="submit"
              data-testid="file-name-submit"
              className="btn px-2 py-1 text-xs"
              disabled={busy || pending.value.trim() === ""}
            >
              {pending.kind === "rename" ? "Rename" : "Create"}
            </button>
          </form>
        )}
        {pending?.kind === "delete" && selected && (
          <div
            role="alertdialog"
            aria-label="Confirm delete"
            className="space-y-1 rounded border border-red-300 p-2 text-sm dark:border-red-800"
          >
            <p>
              Delete <span className="font-mono">{selected}</span>
              {selectedKind.current[selected] === "dir" ? " and everything in it" : ""}? This cannot be undone.
            </p>
            <div className="flex gap-1">
              <button
                type="button"
                data-testid="file-delete-confirm"
                className="btn bg-red-600 px-2 py-1 text-xs hover:bg-red-500"
                disabled={busy}
                onClick={() => void submitPending()}
              >
                Delete
              </button>
              <button type="button" className="btn-quiet px-2 py-1 text-xs" onClick={() => setPending(undefined)}>
                Cancel
              </button>
            </div>
          </div>
        )}
        {actionError && (
          <p role="alert" data-testid="file-action-error" className="text-xs text-red-600">
            {actionError}
          </p>
        )}
        <div className="max-h-[60vh] overflow-auto rounded border border-zinc-200 py-1 dark:border-zinc-800">
          {searching ? (
            <ul aria-label="Search results" className="text-sm">
              {searchError && <li className="px-2 text-xs text-red-600">{searchError}</li>}
              {results?.matches.length === 0 && (
                <li className="px-2 text-xs text-zinc-500">No file name contains that.</li>
              )}
              {results?.matches.map((m) => (
                <li key={m.path}>
                  <button
                    type="button"
                    data-testid="file-search-result"
                    data-path={m.path}
                    className="w-full truncate px-2 py-0.5 text-left font-mono text-xs hover:bg-zinc-100 dark:hover:bg-zinc-800"
                    onClick={() => {
                      setQuery("");
                      setResults(undefined);
                      reveal(m.path, m.kind);
                    }}
                  >
                    {m.path}
                  </button>
                </li>
              ))}
              {results?.stopped && (
                <li className="px-2 text-xs text-zinc-500">
                  Search stopped early ({results.stopped}); type more of the name.
                </li>
              )}
            </ul>
          ) : (
            <FileTree
              dirs={dirs}
              expanded={expanded}
              selected={selected}
              openPath={openPath}
              onToggle={toggle}
              onOpen={setOpenPath}
              onSelect={setSelected}
              onShowMore={(dir) =>
                setDirs((d) => ({ ...d, [dir]: { ...d[dir]!, shown: d[dir]!.shown + treePageSize } }))
              }
              onRetry={(dir) => void loadDir(dir)}
            />
          )}
        </div>
      </div>
      <div className="min-w-0 flex-1">
        {openPath ? (
          <FileEditor key={openPath} slug={slug} path={openPath} canWrite={canWrite} />
        ) : (
          <p className="p-3 text-sm text-zinc-500">
            Open a file from the tree{canWrite ? " to read or edit it." : " to read it."}
          </p>
        )}
      </div>
    </section>
  );
}
