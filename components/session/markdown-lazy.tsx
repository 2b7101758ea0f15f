"use client";

/**
 * The Markdown renderer loaded on first use, for pages where Markdown is occasional (the plan of
 * an approval in the inbox): the page does not carry the Markdown parser up front, and the text
 * shows plain until it arrives.
 */
import { lazy, Suspense } from "react";

const Markdown = lazy(() => import("./markdown").then((m) => ({ default: m.Markdown })));

export function LazyMarkdown({ text }: { text: string }) {
  return (
    <Suspense fallback={<div className="text-sm leading-relaxed break-words whitespace-pre-wrap">{text}</div>}>
      <Markdown text={text} />
    </Suspense>
  );
}
