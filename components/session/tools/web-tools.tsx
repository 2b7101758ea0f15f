"use client";

import type { ToolResultView } from "../conversation";
import { webFigures } from "./tool-data";

/** WebFetch and WebSearch: the URL or query, and the titles of what came back. */
export function WebToolBody({ name, input, result }: { name: string; input: unknown; result?: ToolResultView }) {
  const f = webFigures(name, input, result);
  return (
    <div data-testid="web-figures" className="space-y-1 text-xs">
      <div className="flex flex-wrap items-baseline gap-x-2">
        <span className="text-[11px] font-medium tracking-wide text-zinc-500 uppercase">
          {name === "WebFetch" ? "URL" : "Query"}
        </span>
        {name === "WebFetch" && /^https?:\/\//.test(f.target) ? (
          <a
            href={f.target}
            target="_blank"
            rel="noopener noreferrer"
            className="font-mono break-all text-indigo-600 hover:underline dark:text-indigo-400"
          >
            {f.target}
          </a>
        ) : (
          <span className="font-mono break-all">{f.target}</span>
        )}
        {f.detail && <span className="text-zinc-500">{f.detail}</span>}
      </div>
      {f.links.length > 0 && (
        <ul data-testid="web-results" className="space-y-0.5">
          {f.links.slice(0, 20).map((l) => (
            <li key={l.url} className="truncate">
              <a
                href={l.url}
                target="_blank"
                rel="noopener noreferrer"
                className="text-indigo-600 hover:underline dark:text-indigo-400"
              >
                {l.title}
              </a>{" "}
              <span className="text-zinc-400">{hostOf(l.url)}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "";
  }
}
