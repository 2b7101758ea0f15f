"use client";

import type { ToolBodyProps } from "./tool-data";
import { relativePath } from "../format";
import { fileToolDiff } from "./diff-data";
import { DiffStatsBadge, DiffView } from "./diff-view";
import { workspaceRelative } from "./open-file";
import { OpenFileLink } from "./search-tools";

export const fileToolNames: ReadonlySet<string> = new Set(["Edit", "MultiEdit", "Write", "NotebookEdit"]);

/** Edit, MultiEdit, Write, NotebookEdit: the change as a real diff, and a link to the file. */
export function FileToolBody({ name, input, result, rootPath }: ToolBodyProps) {
  const diff = fileToolDiff(name, input, result && !result.isError ? result.structured : undefined);
  if (!diff) return null;
  const relative = workspaceRelative(diff.path, rootPath);
  const replaceAll = (input as { replace_all?: unknown } | null)?.replace_all === true;
  return (
    <div data-testid="file-diff" data-source={diff.source} data-created={diff.created} className="space-y-1">
      <div className="flex flex-wrap items-baseline gap-x-2 text-xs">
        <span className="text-[11px] font-medium tracking-wide text-zinc-500 uppercase">
          {diff.created ? "New file" : name}
        </span>
        <code className="font-mono break-all">{relativePath(diff.path, rootPath)}</code>
        {replaceAll && <span className="text-zinc-500">(all occurrences)</span>}
        <DiffStatsBadge rows={diff.rows} />
        {relative && <OpenFileLink path={relative} />}
      </div>
      <DiffView rows={diff.rows} />
    </div>
  );
}
