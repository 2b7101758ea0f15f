/**
 * Assistant Markdown rendered by react-markdown with GitHub's extensions (remark-gfm: tables,
 * task lists, strikethrough, autolinks). Raw HTML in model output is never rendered: it is
 * turned into plain text before rendering, so `<script>` reads as text. Links open in a new tab
 * with `rel="noopener noreferrer"` and keep only http(s), mailto and in-page targets; images
 * become links (a model's image URL is not fetched behind the reader's back). Half-streamed
 * text (an open code fence, half a table) renders as far as it goes. Code blocks are
 * highlighted by shiki, loaded only when a code block appears (`./highlight`).
 */
import { Fragment, memo, type ReactElement, type ReactNode } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import { CodeBlock } from "./highlight";

/** The link targets that are safe to follow, else undefined. */
export function safeHref(url: string | undefined | null): string | undefined {
  const trimmed = url?.trim() ?? "";
  if (/^(https?:|mailto:)/i.test(trimmed)) return trimmed;
  if (trimmed.startsWith("#")) return trimmed;
  return undefined;
}

interface MdNode {
  type: string;
  value?: string;
  children?: MdNode[];
}

const flowParents = new Set(["root", "blockquote", "listItem", "footnoteDefinition"]);

/** remark plugin: raw HTML (block or inline) becomes literal text, never markup. */
function remarkHtmlAsText() {
  const walk = (node: MdNode) => {
    node.children = node.children?.map((child) => {
      if (child.type !== "html") return child;
      const text: MdNode = { type: "text", value: child.value ?? "" };
      return flowParents.has(node.type) ? { type: "paragraph", children: [text] } : text;
    });
    node.children?.forEach(walk);
  };
  return (tree: MdNode) => walk(tree);
}

interface HastNode {
  type: string;
  tagName?: string;
  value?: string;
  properties?: { className?: unknown };
  children?: HastNode[];
}

function textOf(node: HastNode): string {
  if (node.type === "text") return node.value ?? "";
  return (node.children ?? []).map(textOf).join("");
}

const linkClass = "text-indigo-600 underline decoration-indigo-300 hover:decoration-indigo-600 dark:text-indigo-400";

function heading(size: string, Tag: "h3" | "h4" | "h5" | "h6") {
  return function Heading({ children }: { children?: ReactNode }) {
    return <Tag className={`${size} mt-3 font-semibold first:mt-0`}>{children}</Tag>;
  };
}

const components: Components = {
  h1: heading("text-lg", "h3"),
  h2: heading("text-base", "h4"),
  h3: heading("text-sm", "h5"),
  h4: heading("text-sm", "h6"),
  h5: heading("text-sm", "h6"),
  h6: heading("text-sm", "h6"),
  p: ({ children }) => <p>{children}</p>,
  a: ({ href, children }) => {
    const safe = safeHref(href);
    if (!safe) return <>{children}</>;
    return (
      <a href={safe} target="_blank" rel="noopener noreferrer" className={linkClass}>
        {children}
      </a>
    );
  },
  img: ({ src, alt }) => {
    const safe = safeHref(typeof src === "string" ? src : undefined);
    const label = alt?.trim() ? `image: ${alt.trim()}` : "image";
    return safe ? (
      <a href={safe} target="_blank" rel="noopener noreferrer" className={linkClass}>
        [{label}]
      </a>
    ) : (
      <span>[{label}]</span>
    );
  },
  blockquote: ({ children }) => (
    <blockquote className="space-y-2 border-l-2 border-zinc-300 pl-3 text-zinc-600 dark:border-zinc-700 dark:text-zinc-400">
      {children}
    </blockquote>
  ),
  ul: ({ className, children }) =>
    className?.includes("contains-task-list") ? (
      <ul className="space-y-1 pl-1">{children}</ul>
    ) : (
      <ul className="list-disc space-y-1 pl-6">{children}</ul>
    ),
  ol: ({ start, children }) => (
    <ol start={start} className="list-decimal space-y-1 pl-6">
      {children}
    </ol>
  ),
  li: ({ className, children }) =>
    className?.includes("task-list-item") ? (
      <li className="flex list-none items-baseline gap-2">{children}</li>
    ) : (
      <li className="space-y-1 pl-1">{children}</li>
    ),
  input: ({ type, checked }) =>
    type === "checkbox" ? (
      <input
        type="checkbox"
        checked={!!checked}
        disabled
        readOnly
        aria-label={checked ? "done" : "not done"}
        className="translate-y-px accent-indigo-600"
      />
    ) : null,
  table: ({ children }) => (
    <div className="overflow-x-auto">
      <table className="text-sm">{children}</table>
    </div>
  ),
  th: ({ style, children }) => (
    <th style={style} className="border-b border-zinc-300 px-2 py-1 text-left font-semibold dark:border-zinc-700">
      {children}
    </th>
  ),
  tr: ({ children }) => <tr className="border-b border-zinc-200 last:border-b-0 dark:border-zinc-800">{children}</tr>,
  td: ({ style, children }) => (
    <td style={style} className="px-2 py-1 align-top">
      {children}
    </td>
  ),
  hr: () => <hr className="border-zinc-200 dark:border-zinc-800" />,
  pre: ({ node }) => {
    const code = (node as HastNode | undefined)?.children?.find((c) => c.type === "element" && c.tagName === "code");
    const classes = code?.properties?.className;
    const lang = (Array.isArray(classes) ? classes : [])
      .map(String)
      .find((c) => c.startsWith("language-"))
      ?.slice("language-".length);
    // mdast-util-to-hast ends a block's code with a newline; the block shows without it.
    return <CodeBlock lang={lang ?? ""} code={code ? textOf(code).replace(/\n$/, "") : ""} />;
  },
  code: ({ children }) => (
    <code className="rounded bg-zinc-100 px-1 py-0.5 font-mono text-[0.85em] dark:bg-zinc-800">{children}</code>
  ),
};

const remarkPlugins = [remarkGfm, remarkHtmlAsText];

/** How many finished texts keep their rendered elements (least recently used dropped first). */
const renderedLimit = 400;
const rendered = new Map<string, ReactElement>();

/**
 * The elements of `text`, parsed once: a virtualized conversation unmounts rows that leave the
 * screen and mounts them again when they come back, and parsing the Markdown again on every
 * return is most of a scroll frame's script. React elements are immutable descriptions, so the
 * same tree serves every mount. Text still streaming changes with every delta: not kept.
 */
function markdownElements(text: string, keep: boolean): ReactElement {
  const hit = rendered.get(text);
  if (hit) {
    rendered.delete(text);
    rendered.set(text, hit);
    return hit;
  }
  // react-markdown's synchronous `Markdown` is a plain function of its options (no hooks)
  const tree = ReactMarkdown({ children: text, remarkPlugins, components, skipHtml: false });
  if (keep) {
    rendered.set(text, tree);
    if (rendered.size > renderedLimit) rendered.delete(rendered.keys().next().value!);
  }
  return tree;
}

const fenceOpen = /^ {0,3}(`{3,}|~{3,})/;
const listItem = /^([-*+]|\d{1,9}[.)])[ \t]/;

/**
 * Streaming text cut where a later delta can no longer change what came before: at blank lines
 * outside code fences that are followed by an unindented line (so an indented list continuation
 * or code block stays whole), and never between two list items (a list stays one list). `done`
 * are the finished blocks, `rest` the block still growing. Each block parses on its own; a link
 * reference defined further down shows as text until the stream ends and the whole text is
 * parsed once more.
 */
export function streamingBlocks(text: string): { done: string[]; rest: string } {
  const lines = text.split("\n");
  const done: string[] = [];
  let start = 0;
  let fence: { char: string; length: number } | undefined;
  let blankBefore = false;
  let blockHead = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const marker = fenceOpen.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence.char && marker.length >= fence.length && line.trim() === marker) fence = undefined;
      continue;
    }
    if (line.trim() === "") {
      blankBefore = i > start;
      continue;
    }
    if (blankBefore && !/^[ \t]/.test(line) && !(listItem.test(blockHead) && listItem.test(line))) {
      done.push(lines.slice(start, i).join("\n").trimEnd());
      start = i;
    }
    if (i === start) blockHead = line;
    blankBefore = false;
    if (marker) fence = { char: marker[0]!, length: marker.length };
  }
  return { done, rest: lines.slice(start).join("\n") };
}

/**
 * Assistant text rendered as Markdown. `streaming` text is parsed block by block
 * ({@link streamingBlocks}): the finished blocks once each, the growing one on every change, so
 * a long reply costs each delta its last paragraph rather than the whole text so far.
 */
export const Markdown = memo(function Markdown({ text, streaming = false }: { text: string; streaming?: boolean }) {
  if (!streaming) return <div className="space-y-2 text-sm leading-relaxed break-words">{markdownElements(text, true)}</div>;
  const { done, rest } = streamingBlocks(text);
  return (
    <div className="space-y-2 text-sm leading-relaxed break-words">
      {done.map((block, i) => (
        <Fragment key={i}>{markdownElements(block, true)}</Fragment>
      ))}
      <Fragment key={done.length}>{markdownElements(rest, false)}</Fragment>
    </div>
  );
});
