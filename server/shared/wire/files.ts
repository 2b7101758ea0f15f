/**
 * The file routes' shapes (`/api/workspaces/<slug>/files…`), shared by server/workspace-fs, which
 * produces them, and the browser's files pane, which imports only these types.
 */

/** One entry of a directory listing. */
export interface DirEntry {
  name: string;
  /** workspace-relative */
  path: string;
  kind: "dir" | "file" | "symlink" | "other";
  /** for a symlink: what it points to, when that is inside the workspace */
  target?: "dir" | "file" | "other";
  /** a symlink whose target is outside the workspace or missing */
  broken?: boolean;
  size?: number;
  ignored?: boolean;
  heavy?: boolean;
}

/** One level of a directory. */
export interface DirListing {
  path: string;
  entries: DirEntry[];
  /** entries in the folder, including any not sent */
  total: number;
  truncated: boolean;
}

/** A file as read for a browser: its text when it is text and small enough, and its version. */
export type FileRead =
  | { path: string; size: number; version: string; kind: "text"; content: string }
  | { path: string; size: number; version: string; kind: "binary" | "too_large" };

/** One file-name search hit. */
export interface NameMatch {
  path: string;
  kind: "dir" | "file";
}

/** The hits, and why the search stopped before walking everything, if it did. */
export interface NameSearchResult {
  matches: NameMatch[];
  stopped?: "results" | "directories" | "time";
}
