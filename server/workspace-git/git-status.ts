/**
 * Branch and status of a repository workspace, from `git status --porcelain=v2 -z`: staged,
 * unstaged and untracked paths, renames with their old name. `GIT_OPTIONAL_LOCKS=0`: reading the
 * status never rewrites the index under a session working in the same checkout.
 */
import path from "node:path";
import type { GitChangeKind, GitFileStatus, GitStatus } from "@/server/shared/wire/git";
import { isInside, type WorkspaceRoot } from "@/server/workspace-fs/workspace-path";
import { findCheckout, gitInOk, type GitCheckout } from "./open-repository";
import { splitNul } from "./run-git";

/** Most changed paths one status answer lists. */
export const maxStatusFiles = 5_000;

const kinds: Readonly<Record<string, GitChangeKind>> = {
  M: "modified",
  A: "added",
  D: "deleted",
  R: "renamed",
  C: "copied",
  T: "typechange",
  U: "unmerged",
};

function kindOf(letter: string | undefined): GitChangeKind | null {
  return letter === undefined || letter === "." ? null : (kinds[letter] ?? "modified");
}

/** The parsed porcelain v2 output (pure). */
export function parsePorcelainV2(fields: readonly string[], limit = maxStatusFiles): { branch: string | null; head: string | null; files: GitFileStatus[]; truncated: boolean } {
  let branch: string | null = null;
  let head: string | null = null;
  const files: GitFileStatus[] = [];
  let truncated = false;
  const add = (file: GitFileStatus) => {
    if (files.length >= limit) truncated = true;
    else files.push(file);
  };
  for (let i = 0; i < fields.length; i++) {
    const line = fields[i]!;
    if (line.startsWith("# branch.head ")) {
      const name = line.slice("# branch.head ".length);
      branch = name === "(detached)" ? null : name;
    } else if (line.startsWith("# branch.oid ")) {
      const oid = line.slice("# branch.oid ".length);
      head = oid === "(initial)" ? null : oid;
    } else if (line.startsWith("1 ")) {
      // 1 XY sub mH mI mW hH hI path
      const parts = line.split(" ");
      const xy = parts[1] ?? "..";
      add({ path: parts.slice(8).join(" "), staged: kindOf(xy[0]), unstaged: kindOf(xy[1]), untracked: false });
    } else if (line.startsWith("2 ")) {
      // 2 XY sub mH mI mW hH hI Xscore path, then the original path as the next field
      const parts = line.split(" ");
      const xy = parts[1] ?? "..";
      const origPath = fields[++i] ?? "";
      add({ path: parts.slice(9).join(" "), origPath, staged: kindOf(xy[0]), unstaged: kindOf(xy[1]), untracked: false });
    } else if (line.startsWith("u ")) {
      // u XY sub m1 m2 m3 mW h1 h2 h3 path
      const parts = line.split(" ");
      add({ path: parts.slice(10).join(" "), staged: "unmerged", unstaged: "unmerged", untracked: false });
    } else if (line.startsWith("? ")) {
      add({ path: line.slice(2), staged: null, unstaged: null, untracked: true });
    }
  }
  return { branch, head, files, truncated };
}

/** Status of a checkout already opened. */
export async function statusOfCheckout(checkout: GitCheckout): Promise<Extract<GitStatus, { repository: true }>> {
  const out = await gitInOk(
    checkout,
    ["--no-optional-locks", "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignore-submodules=dirty"],
    "Cannot read the repository's status",
  );
  const parsed = parsePorcelainV2(splitNul(out));
  // a workspace nested inside this one is not this one's to show, not even its file names
  if (checkout.excluded.length > 0) {
    parsed.files = parsed.files.filter((f) => !checkout.excluded.some((other) => isInside(other, path.join(checkout.topLevel, f.path))));
  }
  return { repository: true, ...parsed };
}

/** The workspace's branch and changed paths, or `{repository: false}`. */
export async function readGitStatus(ws: WorkspaceRoot): Promise<GitStatus> {
  const checkout = await findCheckout(ws);
  if (!checkout) return { repository: false };
  return statusOfCheckout(checkout);
}
