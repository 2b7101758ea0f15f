/**
 * The browser's side of the git routes (`/api/workspaces/<slug>/git…`); the shapes are the wire
 * contract's (server/shared/wire/git.ts).
 */

import { networkErrorMessage } from "@/components/network-error";
import type { GitCommitResult, GitFileDiff, GitStatus, WorktreeMergeStrategy, WorktreeView } from "@/server/shared/wire/git";

export type { GitFileDiff, GitFileSide, GitFileStatus, GitStatus, WorktreeView } from "@/server/shared/wire/git";

/** A failed request, with the server's code and message (and a merge's conflicting files). */
export class GitRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly conflicts: string[] = [],
  ) {
    super(message);
  }
}

async function call<T>(url: string, init?: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { cache: "no-store", ...init });
  } catch {
    throw new GitRequestError(0, "network", networkErrorMessage);
  }
  const body = (await res.json().catch(() => null)) as {
    data?: T;
    error?: { code?: string; message?: string; conflicts?: string[] };
  } | null;
  if (!res.ok || !body || body.data === undefined) {
    throw new GitRequestError(
      res.status,
      body?.error?.code ?? "unknown",
      body?.error?.message ?? `The request failed (${res.status}).`,
      body?.error?.conflicts ?? [],
    );
  }
  return body.data;
}

const json = (method: string, payload: unknown): RequestInit => ({
  method,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(payload),
});

const base = (slug: string) => `/api/workspaces/${encodeURIComponent(slug)}/git`;
const worktree = (slug: string, sessionId: string) => `${base(slug)}/worktrees/${encodeURIComponent(sessionId)}`;

export const gitApi = {
  status: (slug: string) => call<GitStatus>(base(slug)),
  diff: (slug: string, path: string, orig?: string) =>
    call<GitFileDiff>(`${base(slug)}/diff?path=${encodeURIComponent(path)}${orig ? `&orig=${encodeURIComponent(orig)}` : ""}`),
  commit: (slug: string, paths: string[], message: string) =>
    call<GitCommitResult>(`${base(slug)}/commit`, json("POST", { paths, message })),
  discard: (slug: string, path: string, confirmDelete: boolean) =>
    call<{ path: string; action: "restored" | "deleted" }>(`${base(slug)}/discard`, json("POST", { path, confirmDelete })),
  worktree: (slug: string, sessionId: string) => call<WorktreeView | null>(worktree(slug, sessionId)),
  worktreeDiff: (slug: string, sessionId: string, path: string) =>
    call<GitFileDiff>(`${worktree(slug, sessionId)}/diff?path=${encodeURIComponent(path)}`),
  merge: (slug: string, sessionId: string, strategy: WorktreeMergeStrategy) =>
    call<{ commit: string; strategy: WorktreeMergeStrategy }>(`${worktree(slug, sessionId)}/merge`, json("POST", { strategy })),
  discardWorktree: (slug: string, sessionId: string) =>
    call<{ sessionId: string; branch: string }>(worktree(slug, sessionId), { method: "DELETE" }),
};
