/**
 * "Open this file in the Files pane": a window event the session page's Files drawer listens to,
 * so a tool card needs no handle on the drawer. The path is relative to the workspace root.
 */
export const openFileEvent = "conduit:open-file";

export interface OpenFileDetail {
  /** Empty: open the pane where it was. */
  path: string;
}

export function requestOpenFile(path: string): void {
  window.dispatchEvent(new CustomEvent<OpenFileDetail>(openFileEvent, { detail: { path } }));
}

/** Opens the Files pane as it was (the session page's Files button on narrow screens). */
export function requestOpenFiles(): void {
  requestOpenFile("");
}

/** The workspace-relative path of an absolute file path inside `root`, or undefined when outside it. */
export function workspaceRelative(file: string, root: string | undefined): string | undefined {
  if (!root || !file) return undefined;
  const base = root.endsWith("/") ? root : `${root}/`;
  if (!file.startsWith(base)) return file.startsWith("/") ? undefined : file.replace(/^\.\//, "");
  const rel = file.slice(base.length);
  return rel === "" || rel.split("/").includes("..") ? undefined : rel;
}
