"use client";

import { useEffect, useState, type ReactNode } from "react";
import { openFileEvent, type OpenFileDetail } from "@/components/session/tools/open-file";
import { FilesPane } from "./files-pane";

/** The Files pane beside a session: a button on the page's edge opens it as a side panel. */
export function FilesDrawer({ slug, canWrite, children }: { slug: string; canWrite: boolean; children?: ReactNode }) {
  const [open, setOpen] = useState(false);
  // A tool card's "Open in Files" link: open the drawer on that file.
  const [requested, setRequested] = useState<{ path: string; at: number }>();
  useEffect(() => {
    const onOpen = (e: Event) => {
      const path = (e as CustomEvent<OpenFileDetail>).detail?.path;
      if (!path) return;
      setRequested({ path, at: Date.now() });
      setOpen(true);
    };
    window.addEventListener(openFileEvent, onOpen);
    return () => window.removeEventListener(openFileEvent, onOpen);
  }, []);
  return (
    <>
      <button
        type="button"
        data-testid="files-toggle"
        aria-expanded={open}
        aria-controls="files-drawer"
        className="btn-quiet fixed top-1/2 right-0 z-30 -translate-y-1/2 rounded-r-none bg-white px-2 py-3 text-xs [writing-mode:vertical-rl] dark:bg-zinc-900"
        onClick={() => setOpen((o) => !o)}
      >
        {open ? "Close files" : "Files"}
      </button>
      {open && (
        <aside
          id="files-drawer"
          aria-label="Workspace files"
          className="fixed top-0 right-8 bottom-0 z-30 w-[min(1000px,calc(100vw-3rem))] overflow-auto border-l border-zinc-200 bg-white p-3 shadow-xl dark:border-zinc-800 dark:bg-zinc-900"
          onKeyDown={(e) =>
            e.key === "Escape" && !(e.target as HTMLElement).closest(".monaco-editor") && setOpen(false)
          }
        >
          <FilesPane key={requested?.at} slug={slug} canWrite={canWrite} initialPath={requested?.path} />
          {children && <div className="mt-4 space-y-4">{children}</div>}
        </aside>
      )}
    </>
  );
}
