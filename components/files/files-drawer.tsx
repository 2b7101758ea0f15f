"use client";

import { useEffect, useState, type ReactNode } from "react";
import { openFileEvent, type OpenFileDetail } from "@/components/session/tools/open-file";
import { FilesPane } from "./files-pane";

/**
 * The Files pane beside a session: a button on the page's edge opens it as a side panel. On a
 * narrow screen that button would cover the conversation's text: the session's tab row has a
 * Files button there instead (`requestOpenFiles`), and the panel takes the screen with its own
 * Close button.
 */
export function FilesDrawer({ slug, canWrite, children }: { slug: string; canWrite: boolean; children?: ReactNode }) {
  const [open, setOpen] = useState(false);
  // A tool card's "Open in Files" link: open the drawer on that file.
  const [requested, setRequested] = useState<{ path: string; at: number }>();
  useEffect(() => {
    const onOpen = (e: Event) => {
      const path = (e as CustomEvent<OpenFileDetail>).detail?.path;
      if (path) setRequested({ path, at: Date.now() });
      setOpen(true);
    };
    window.addEventListener(openFileEvent, onOpen);
    return () => window.removeEventListener(openFileEvent, onOpen);
  }, []);
  return (
    <>
      {/* a display wrapper: .btn-quiet sets the display itself, outside the utilities layer */}
      <div className="max-sm:hidden">
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
      </div>
      {open && (
        <aside
          id="files-drawer"
          aria-label="Workspace files"
          className="fixed top-0 right-8 bottom-0 z-30 w-[min(1000px,calc(100vw-3rem))] overflow-auto border-l border-zinc-200 bg-white p-3 shadow-xl max-sm:right-0 max-sm:w-full dark:border-zinc-800 dark:bg-zinc-900"
          onKeyDown={(e) =>
            e.key === "Escape" && !(e.target as HTMLElement).closest(".monaco-editor") && setOpen(false)
          }
        >
          <div className="mb-2 flex justify-end sm:hidden">
            <button
              type="button"
              data-testid="files-close"
              className="btn-quiet text-xs"
              onClick={() => setOpen(false)}
            >
              Close files
            </button>
          </div>
          <FilesPane key={requested?.at} slug={slug} canWrite={canWrite} initialPath={requested?.path} />
          {children && <div className="mt-4 space-y-4">{children}</div>}
        </aside>
      )}
    </>
  );
}
