/**
 * The git routes' shapes (`/api/workspaces/<slug>/git…`), shared by server/workspace-git, which
 * produces them, and the browser's Git panel, which imports only these types.
 */

/** What happened to a path, in the index or the working tree (git's XY letters, named). */
export type GitChangeKind = "modified" | "added" | "deleted" | "renamed" | "copied" | "typechange" | "unmerged";

/** One changed path of a repository workspace. */
export interface GitFileStatus {
  /** workspace-relative (the new name of a rename) */
  path: string;
  /** the old name of a rename or copy */
  origPath?: string;
  /** the change staged in the index against HEAD, if any */
  staged: GitChangeKind | null;
  /** the change in the working tree against the index, if any */
  unstaged: GitChangeKind | null;
  untracked: boolean;
}

/** A workspace's repository as the Git panel sees it; `repository: false` and nothing else otherwise. */
export type GitStatus =
  | { repository: false }
  | {
      repository: true;
      /** the checked-out branch; null when HEAD is detached */
      branch: string | null;
      /** the commit HEAD points at; null before the first commit */
      head: string | null;
      files: GitFileStatus[];
      /** more changed paths than were sent */
      truncated: boolean;
    };

/** One side of a file diff: text when it is text and small enough. */
export type GitFileSide =
  | { kind: "text"; content: string }
  | { kind: "binary" | "too_large"; size: number }
  | { kind: "absent" };

/** A file against HEAD (or a session branch against its base): before and after. */
export interface GitFileDiff {
  path: string;
  before: GitFileSide;
  after: GitFileSide;
}

/** A commit made through Conduit. */
export interface GitCommitResult {
  commit: string;
  branch: string | null;
  paths: string[];
}

/** One path a session's worktree branch changed against its base. */
export interface WorktreeChange {
  path: string;
  status: "added" | "modified" | "deleted";
}

/** A session's own worktree: where, which branch, and what it changed against its base. */
export interface WorktreeView {
  sessionId: string;
  path: string;
  branch: string;
  baseBranch: string;
  /** null while it exists; the time it was merged away or discarded otherwise */
  closedAt: string | null;
  changes: WorktreeChange[];
}

/** How a worktree branch goes back into its base. */
export type WorktreeMergeStrategy = "merge" | "rebase";

/** A merge or rebase that did not happen: the files in conflict (the attempt was aborted). */
export interface WorktreeConflict {
  code: "conflict";
  message: string;
  conflicts: string[];
}
