"use client";

import dynamic from "next/dynamic";
import { useCallback, useEffect, useRef, useState } from "react";
import { languageForPath } from "@/components/approval/apply-hunks";
import { DiffSkeleton } from "@/components/approval/diff-skeleton";
import type { ReviewDiffHandle } from "@/components/approval/review-diff";
import type { CodeEditorHandle } from "./code-editor";
import { filesApi, FilesRequestError, type FileRead } from "./files-api";

const CodeEditor = dynamic(() => import("./code-editor"), {
  ssr: false,
  loading: () => <div className="h-[60vh] motion-safe:animate-pulse rounded bg-zinc-100 dark:bg-zinc-800" />,
});
const ReviewDiff = dynamic(() => import("@/components/approval/review-diff"), {
  ssr: false,
  loading: () => <DiffSkeleton height={240} />,
});

/** How often an open file asks for its version while the tab is visible. */
const pollMs = 2000;

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

interface Base {
  content: string;
  version: string;
}

/**
 * One open file: Monaco (read-only for viewers), save with the version it was opened at
 * (Ctrl/Cmd-S too), a diff to merge when the file changed on disk meanwhile, and a poll of the
 * file's version every 2 s while the tab is visible: an unedited file reloads, an edited one
 * asks "reload / keep mine".
 */
export function FileEditor({
  slug,
  path,
  canWrite,
  onSaved,
}: {
  slug: string;
  path: string;
  canWrite: boolean;
  onSaved?: (path: string) => void;
}) {
  const [file, setFile] = useState<FileRead>();
  const [loadError, setLoadError] = useState<string>();
  const [text, setText] = useState("");
  const [base, setBase] = useState<Base>();
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<string>();
  const [savedAt, setSavedAt] = useState<number>();
  /** the file as it is on disk when a save was refused (null: deleted meanwhile) */
  const [conflict, setConflict] = useState<{ theirs: FileRead | null }>();
  const [diskChange, setDiskChange] = useState<"changed" | "deleted">();
  const editor = useRef<CodeEditorHandle | null>(null);
  const merge = useRef<ReviewDiffHandle | null>(null);
  const state = useRef({ text, base, saving, ignoredVersion: undefined as string | undefined, conflict: false });
  useEffect(() => {
    state.current.text = text;
    state.current.base = base;
    state.current.saving = saving;
    state.current.conflict = conflict !== undefined;
  });

  const adopt = useCallback((read: FileRead) => {
    setFile(read);
    setDiskChange(undefined);
    state.current.ignoredVersion = undefined;
    if (read.kind === "text") {
      setBase({ content: read.content, version: read.version });
      setText(read.content);
      editor.current?.setValue(read.content);
    } else setBase(undefined);
  }, []);

  const load = useCallback(async () => {
    setLoadError(undefined);
    try {
      adopt(await filesApi.read(slug, path));
    } catch (err) {
      setLoadError(err instanceof Error ? err.message : String(err));
    }
  }, [slug, path, adopt]);

  useEffect(() => {
    let cancelled = false;
    filesApi.read(slug, path).then(
      (read) => {
        if (!cancelled) adopt(read);
      },
      (err: unknown) => {
        if (!cancelled) setLoadError(err instanceof Error ? err.message : String(err));
      },
    );
    return () => {
      cancelled = true;
    };
  }, [slug, path, adopt]);

  // The version poll: cheap (the server hashes only files whose identity or mtime changed).
  useEffect(() => {
    const timer = setInterval(async () => {
      const s = state.current;
      if (document.visibilityState !== "visible" || s.saving || !s.base || s.conflict) return;
      let version: string;
      try {
        version = (await filesApi.version(slug, path)).version;
      } catch (err) {
        if (err instanceof FilesRequestError && err.status === 404) setDiskChange("deleted");
        return;
      }
      const now = state.current;
      if (!now.base || version === now.base.version || version === now.ignoredVersion) return;
      if (now.text === now.base.content) {
        const read = await filesApi.read(slug, path).catch(() => undefined);
        if (read && state.current.text === state.current.base?.content) adopt(read);
      } else setDiskChange("changed");
    }, pollMs);
    return () => clearInterval(timer);
  }, [slug, path, adopt]);

  const save = useCallback(
    async (content: string, baseVersion: string | null) => {
      if (!canWrite || state.current.saving) return;
      setSaving(true);
      state.current.saving = true;
      setSaveError(undefined);
      try {
        const saved = await filesApi.save(slug, path, content, baseVersion);
        setBase({ content, version: saved.version });
        setFile({ path, kind: "text", content, version: saved.version, size: saved.size });
        setConflict(undefined);
        setDiskChange(undefined);
        setSavedAt(Date.now());
        if (editor.current && editor.current.getValue() !== content) editor.current.setValue(content);
        setText(content);
        onSaved?.(path);
      } catch (err) {
        if (err instanceof FilesRequestError && err.code === "conflict") setConflict({ theirs: err.current ?? null });
        else setSaveError(err instanceof Error ? err.message : String(err));
      } finally {
        setSaving(false);
        state.current.saving = false;
      }
    },
    [canWrite, slug, path, onSaved],
  );

  const saveCurrent = useCallback(() => {
    const s = state.current;
    if (!s.base || s.conflict) return;
    void save(editor.current?.getValue() ?? s.text, s.base.version);
  }, [save]);

  if (loadError) {
    return (
      <div data-testid="editor" data-path={path} className="space-y-2 p-3 text-sm">
        <p className="text-red-600" role="alert">
          {loadError}
        </p>
        <button type="button" className="btn-quiet" onClick={() => void load()}>
          Try again
        </button>
      </div>
    );
  }
  if (!file) {
    return (
      <div data-testid="editor" data-path={path} aria-busy className="p-3 text-sm text-zinc-500">
        Opening {path}…
      </div>
    );
  }
  if (file.kind !== "text") {
    return (
      <div
        data-testid="editor"
        data-path={path}
        data-kind={file.kind}
        className="p-3 text-sm text-zinc-600 dark:text-zinc-400"
      >
        <span className="font-mono">{path}</span> ·{" "}
        {file.kind === "binary"
          ? `a binary file (${formatSize(file.size)}); not shown`
          : `${formatSize(file.size)}: over the 5 MB Conduit opens in the browser`}
      </div>
    );
  }

  const dirty = base !== undefined && text !== base.content;
  return (
    <div
      data-testid="editor"
      data-path={path}
      data-dirty={dirty ? "true" : "false"}
      data-version={base?.version}
      className="flex flex-col gap-2"
      onKeyDown={(e) => {
        if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
          e.preventDefault();
          saveCurrent();
        }
      }}
    >
      <div className="flex flex-wrap items-center gap-2 text-xs">
        <span className="font-mono text-sm">{path}</span>
        {dirty && <span className="text-amber-600">● unsaved</span>}
        {!canWrite && (
          <span data-testid="editor-readonly" className="rounded bg-zinc-200 px-1 dark:bg-zinc-700">
            read-only
          </span>
        )}
        {savedAt && !dirty && (
          <span className="text-zinc-500" data-testid="editor-saved">
            saved
          </span>
        )}
        {canWrite && (
          <button
            type="button"
            data-testid="editor-save"
            className="btn ml-auto"
            disabled={saving || !dirty || conflict !== undefined}
            onClick={saveCurrent}
          >
            {saving ? "Saving…" : "Save"}
          </button>
        )}
      </div>
      {saveError && (
        <p role="alert" data-testid="editor-error" className="text-sm text-red-600">
          {saveError}
        </p>
      )}
      {diskChange && !conflict && (
        <div
          role="status"
          data-testid="editor-disk-changed"
          className="flex flex-wrap items-center gap-2 rounded border border-amber-300 bg-amber-50 px-2 py-1 text-sm dark:border-amber-700 dark:bg-amber-950/40"
        >
          {diskChange === "deleted"
            ? "This file was deleted on disk."
            : "This file changed on disk while you were editing it."}
          {diskChange === "changed" && (
            <button type="button" data-testid="editor-reload" className="btn-quiet" onClick={() => void load()}>
              Reload (drop my edits)
            </button>
          )}
          <button
            type="button"
            data-testid="editor-keep-mine"
            className="btn-quiet"
            onClick={async () => {
              const v = await filesApi.version(slug, path).catch(() => undefined);
              state.current.ignoredVersion = v?.version;
              setDiskChange(undefined);
            }}
          >
            Keep mine
          </button>
        </div>
      )}
      {conflict && (
        <div data-testid="editor-conflict" className="space-y-2 rounded border border-red-300 p-2 dark:border-red-800">
          <p className="text-sm">
            {conflict.theirs
              ? "The file changed on disk since you opened it. Left: the file now; right: your version. Merge on the right, then save."
              : "The file was deleted on disk since you opened it."}
          </p>
          {conflict.theirs?.kind === "text" && (
            <ReviewDiff
              original={conflict.theirs.content}
              modified={text}
              language={languageForPath(path)}
              height={240}
              maxHeight={520}
              onChange={(merged) => setText(merged)}
              onReady={(h) => {
                merge.current = h;
              }}
            />
          )}
          <div className="flex flex-wrap gap-2">
            {conflict.theirs ? (
              <button
                type="button"
                data-testid="editor-conflict-save"
                className="btn"
                disabled={saving}
                onClick={() => void save(merge.current?.getModified() ?? text, conflict.theirs!.version)}
              >
                Save merged version
              </button>
            ) : (
              <button
                type="button"
                data-testid="editor-conflict-save"
                className="btn"
                disabled={saving}
                onClick={() => void save(text, null)}
              >
                Save mine as a new file
              </button>
            )}
            {conflict.theirs?.kind === "text" && (
              <button
                type="button"
                data-testid="editor-conflict-theirs"
                className="btn-quiet"
                onClick={() => {
                  setConflict(undefined);
                  adopt(conflict.theirs!);
                }}
              >
                Take the file on disk
              </button>
            )}
            <button
              type="button"
              data-testid="editor-conflict-cancel"
              className="btn-quiet"
              onClick={() => setConflict(undefined)}
            >
              Back to editing
            </button>
          </div>
        </div>
      )}
      <div className={conflict ? "hidden" : undefined}>
        <CodeEditor
          key={path}
          initial={base?.content ?? ""}
          language={languageForPath(path)}
          readOnly={!canWrite}
          onChange={setText}
          onSave={saveCurrent}
          onReady={(h) => {
            editor.current = h;
          }}
        />
      </div>
    </div>
  );
}
