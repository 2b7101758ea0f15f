/**
 * The browser's side of the file routes (`/api/workspaces/<slug>/files…`); the shapes are the
 * wire contract's (server/shared/wire/files.ts).
 */

import { networkErrorMessage } from "@/components/network-error";
import type { DirListing, FileRead, NameSearchResult } from "@/server/shared/wire/files";

export type { DirEntry, DirListing, FileRead, NameSearchResult } from "@/server/shared/wire/files";

/** A failed request, with the server's code and message (and, for a save conflict, the file now). */
export class FilesRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly current?: FileRead | null,
  ) {
    super(message);
  }
}

function base(slug: string): string {
  return `/api/workspaces/${encodeURIComponent(slug)}/files`;
}

async function call<T>(url: string, init?: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { cache: "no-store", ...init });
  } catch {
    throw new FilesRequestError(0, "network", networkErrorMessage);
  }
  const body = (await res.json().catch(() => null)) as {
    data?: T;
    error?: { code?: string; message?: string; current?: FileRead | null };
  } | null;
  if (!res.ok || !body || body.data === undefined) {
    throw new FilesRequestError(
      res.status,
      body?.error?.code ?? "unknown",
      body?.error?.message ?? `The request failed (${res.status}).`,
      body?.error?.current,
    );
  }
  return body.data;
}

const json = (method: string, payload: unknown): RequestInit => ({
  method,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(payload),
});

export const filesApi = {
  list: (slug: string, dir: string) => call<DirListing>(`${base(slug)}?path=${encodeURIComponent(dir)}`),
  search: (slug: string, q: string, signal?: AbortSignal) =>
    call<NameSearchResult>(`${base(slug)}/search?q=${encodeURIComponent(q)}`, { signal }),
  read: (slug: string, path: string) => call<FileRead>(`${base(slug)}/content?path=${encodeURIComponent(path)}`),
  version: (slug: string, path: string) =>
    call<{ path: string; size: number; version: string }>(
      `${base(slug)}/content?path=${encodeURIComponent(path)}&versionOnly=1`,
    ),
  save: (slug: string, path: string, content: string, baseVersion: string | null) =>
    call<{ path: string; version: string; size: number }>(
      `${base(slug)}/content`,
      json("PUT", { path, content, baseVersion }),
    ),
  create: (slug: string, path: string, kind: "file" | "dir") =>
    call<{ path: string }>(base(slug), json("POST", { path, kind })),
  rename: (slug: string, from: string, to: string) =>
    call<{ from: string; to: string }>(`${base(slug)}/rename`, json("POST", { from, to })),
  remove: (slug: string, path: string) =>
    call<{ path: string }>(`${base(slug)}?path=${encodeURIComponent(path)}`, { method: "DELETE" }),
};

/** The folder part of a relative path (`""` for the root). */
export function parentOf(path: string): string {
  const at = path.lastIndexOf("/");
  return at === -1 ? "" : path.slice(0, at);
}
