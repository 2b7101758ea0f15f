"use client";

import { relativePath } from "../format";
import { requestOpenFile, workspaceRelative } from "./open-file";
import { searchFigures, type ToolBodyProps } from "./tool-data";

/** Read, Grep, Glob: what was looked at or for, how much came back; the output is in the card's result. */
export function SearchToolBody({ name, input, result, rootPath }: ToolBodyProps) {
  const f = searchFigures(name, input, result);
  const relative = name === "Read" ? workspaceRelative(f.target, rootPath) : undefined;
  return (
    <div data-testid="search-figures" className="space-y-1 text-xs">
      <div className="flex flex-wrap items-baseline gap-x-2">
        <span className="text-[11px] font-medium tracking-wide text-zinc-500 uppercase">
          {name === "Read" ? "File" : "Pattern"}
        </span>
        <code className="font-mono break-all">{name === "Read" ? relativePath(f.target, rootPath) : f.target}</code>
        {f.scope && <span className="font-mono text-zinc-500">in {relativePath(f.scope, rootPath)}</span>}
        {f.count && (
          <span
            data-testid="search-count"
            className="rounded bg-zinc-100 px-1.5 text-zinc-600 dark:bg-zinc-800 dark:text-zinc-300"
          >
            {f.count}
          </span>
        )}
        {relative && <OpenFileLink path={relative} />}
      </div>
      {f.paths.length > 0 && (
        <ul className="max-h-40 overflow-auto font-mono text-zinc-600 dark:text-zinc-400">
          {f.paths.slice(0, 200).map((p) => {
            const rel = workspaceRelative(p, rootPath);
            return (
              <li key={p}>
                {rel ? (
                  <button type="button" className="hover:underline" onClick={() => requestOpenFile(rel)}>
                    {rel}
                  </button>
                ) : (
                  relativePath(p, rootPath)
                )}
              </li>
            );
          })}
          {f.paths.length > 200 && <li className="italic">… {f.paths.length - 200} more</li>}
        </ul>
      )}
    </div>
  );
}

export function OpenFileLink({ path }: { path: string }) {
  return (
    <button
      type="button"
      data-testid="tool-open-file"
      data-path={path}
      className="text-indigo-600 hover:underline focus-visible:outline-2 focus-visible:outline-indigo-500 dark:text-indigo-400"
      onClick={() => requestOpenFile(path)}
    >
      Open in Files
    </button>
  );
}
