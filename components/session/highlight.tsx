"use client";

/**
 * A fenced code block with its language label. Highlighting is done by shiki, which is loaded
 * only when a block in a known language appears (a dynamic import of `./shiki-highlighter`, with
 * its grammars and themes split into their own chunks), so pages without code never fetch it.
 * Until shiki answers, and for unknown languages, the code shows as plain text. While text
 * streams, the last highlighted prefix is kept and the new tail is shown plain until the next
 * highlight lands. Tokens become React spans: no HTML string is injected.
 */
import { Fragment, useEffect, useState, type CSSProperties } from "react";
import type { HighlightedLines } from "./shiki-highlighter";
import { shikiLanguageOf } from "./highlight-languages";

interface Highlighted {
  code: string;
  lines: HighlightedLines;
}

export function CodeBlock({ lang, code }: { lang: string; code: string }) {
  const language = shikiLanguageOf(lang);
  const [highlighted, setHighlighted] = useState<Highlighted>();

  useEffect(() => {
    if (!language) return;
    let current = true;
    import("./shiki-highlighter")
      .then(({ highlight }) => highlight(code, language))
      .then((lines) => {
        if (current && lines) setHighlighted({ code, lines });
      })
      .catch(() => {
        // A chunk that fails to load leaves the code plain; it stays readable.
      });
    return () => {
      current = false;
    };
  }, [code, language]);

  const usable = language && highlighted && code.startsWith(highlighted.code) ? highlighted : undefined;
  return (
    <div className="overflow-hidden rounded-md border border-zinc-200 bg-zinc-50 dark:border-zinc-800 dark:bg-zinc-950">
      {lang && (
        <div className="border-b border-zinc-200 px-3 py-1 font-mono text-[11px] text-zinc-500 dark:border-zinc-800">
          {lang}
        </div>
      )}
      <pre className="overflow-x-auto px-3 py-2 font-mono text-[12.5px] leading-relaxed">
        <code className={usable ? "shiki-code" : undefined} data-highlighted={usable ? "true" : undefined}>
          {usable ? (
            <>
              {usable.lines.map((line, i) => (
                <Fragment key={i}>
                  {i > 0 && "\n"}
                  {line.map((token, j) => (
                    <span key={j} style={token.style as CSSProperties}>
                      {token.content}
                    </span>
                  ))}
                </Fragment>
              ))}
              {code.slice(usable.code.length)}
            </>
          ) : (
            code
          )}
        </code>
      </pre>
    </div>
  );
}
