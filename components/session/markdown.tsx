/**
 * Renders assistant Markdown as React elements: headings, paragraphs, lists, block quotes,
 * tables, rules, fenced code (highlighted), inline code, emphasis, links. No HTML string is
 * ever built or injected, so model output cannot add markup or scripts; links keep only
 * http(s), mailto and in-page targets. Unclosed fences (text still streaming) run to the end.
 */
import { Fragment, memo, type ReactNode } from "react";
import { highlightCode } from "./highlight";

type Block =
  | { type: "heading"; level: number; text: string }
  | { type: "paragraph"; text: string }
  | { type: "code"; lang: string; code: string }
  | { type: "quote"; blocks: Block[] }
  | { type: "list"; ordered: boolean; start: number; items: Block[][] }
  | { type: "table"; head: string[]; align: Array<"left" | "center" | "right" | undefined>; rows: string[][] }
  | { type: "rule" };

const fenceRe = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/;
const headingRe = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const ruleRe = /^ {0,3}((\*\s*){3,}|(-\s*){3,}|(_\s*){3,})$/;
const quoteRe = /^ {0,3}> ?/;
const listRe = /^( *)([-*+]|\d{1,9}[.)])\s+/;
const tableSepRe = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

/** Splits Markdown into blocks. */
export function parseBlocks(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  let i = 0;
  const startsBlock = (line: string, next?: string) =>
    fenceRe.test(line) ||
    headingRe.test(line) ||
    ruleRe.test(line) ||
    quoteRe.test(line) ||
    listRe.test(line) ||
    (line.includes("|") && next !== undefined && tableSepRe.test(next));

  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === "") {
      i++;
      continue;
    }
    const fence = fenceRe.exec(line);
    if (fence) {
      const marker = fence[1]!;
      const body: string[] = [];
      i++;
      while (
        i < lines.length &&
        !new RegExp(`^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}\\s*$`).test(lines[i]!)
      )
        body.push(lines[i++]!);
      i++;
      blocks.push({ type: "code", lang: fence[2] ?? "", code: body.join("\n") });
      continue;
    }
    const heading = headingRe.exec(line);
    if (heading) {
      blocks.push({ type: "heading", level: heading[1]!.length, text: heading[2] ?? "" });
      i++;
      continue;
    }
    if (ruleRe.test(line)) {
      blocks.push({ type: "rule" });
      i++;
      continue;
    }
    if (quoteRe.test(line)) {
      const body: string[] = [];
      while (i < lines.length && lines[i]!.trim() !== "" && (quoteRe.test(lines[i]!) || !startsBlock(lines[i]!)))
        body.push(lines[i++]!.replace(quoteRe, ""));
      blocks.push({ type: "quote", blocks: parseBlocks(body.join("\n")) });
      continue;
    }
    const list = listRe.exec(line);
    if (list) {
      const indent = list[1]!.length;
      const ordered = /\d/.test(list[2]!);
      const items: string[][] = [];
      while (i < lines.length) {
        const current = lines[i]!;
        const m = listRe.exec(current);
        if (m && m[1]!.length <= indent + 1 && /\d/.test(m[2]!) === ordered) {
          items.push([current.slice(m[0].length)]);
          i++;
          continue;
        }
        if (current.trim() === "") {
          // A blank line ends the list unless an indented continuation follows.
          const next = lines[i + 1];
          if (next !== undefined && /^\s{2,}\S/.test(next) && items.length > 0) {
            items.at(-1)!.push("");
            i++;
            continue;
          }
          break;
        }
        if (/^\s+\S/.test(current) || (!startsBlock(current) && items.length > 0 && !m)) {
          items.at(-1)!.push(current.replace(new RegExp(`^ {0,${indent + 4}}`), ""));
          i++;
          continue;
        }
        break;
      }
      blocks.push({
        type: "list",
        ordered,
        start: ordered ? parseInt(list[2]!, 10) : 1,
        items: items.map((it) => parseBlocks(it.join("\n"))),
      });
      continue;
    }
    const next = lines[i + 1];
    if (line.includes("|") && next !== undefined && tableSepRe.test(next)) {
      const head = splitRow(line);
      const align = splitRow(next).map((c) =>
        c.startsWith(":") && c.endsWith(":")
          ? "center"
          : c.endsWith(":")
            ? "right"
            : c.startsWith(":")
              ? "left"
              : undefined,
      );
      i += 2;
      const rows: string[][] = [];
      while (i < lines.length && lines[i]!.includes("|") && lines[i]!.trim() !== "") rows.push(splitRow(lines[i++]!));
      blocks.push({ type: "table", head, align, rows });
      continue;
    }
    const body: string[] = [line];
    i++;
    while (i < lines.length && lines[i]!.trim() !== "" && !startsBlock(lines[i]!, lines[i + 1])) body.push(lines[i++]!);
    blocks.push({ type: "paragraph", text: body.join("\n") });
  }
  return blocks;
}

function splitRow(line: string): string[] {
  const cells = line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split(/(?<!\\)\|/);
  return cells.map((c) => c.trim().replace(/\\\|/g, "|"));
}

/** True for link targets that are safe to follow. */
export function safeHref(url: string): string | undefined {
  const trimmed = url.trim();
  if (/^(https?:|mailto:)/i.test(trimmed)) return trimmed;
  if (trimmed.startsWith("#")) return trimmed;
  return undefined;
}

const inlineRe =
  /(`+)([\s\S]*?[^`])\1(?!`)|\[([^\]\n]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)|<(https?:\/\/[^>\s]+)>|(https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"])|\*\*([\s\S]+?)\*\*|__([\s\S]+?)__|~~([\s\S]+?)~~|\*([^*\s](?:[\s\S]*?[^*\s])?)\*|(?<![\w])_([^_\s](?:[\s\S]*?[^_\s])?)_(?![\w])|(\n)/g;

/** Inline Markdown as React nodes. */
export function renderInline(text: string, keyPrefix = "i"): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  let n = 0;
  const key = () => `${keyPrefix}.${n++}`;
  const re = new RegExp(inlineRe.source, "g");
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    last = m.index + m[0].length;
    const k = key();
    if (m[1] !== undefined) {
      out.push(
        <code key={k} className="rounded bg-zinc-100 px-1 py-0.5 font-mono text-[0.85em] dark:bg-zinc-800">
          {m[2]!.replace(/^ (.*) $/, "$1")}
        </code>,
      );
    } else if (m[3] !== undefined) {
      const href = safeHref(m[4]!);
      out.push(
        href ? (
          <a
            key={k}
            href={href}
            target="_blank"
            rel="noopener noreferrer nofollow"
            className="text-indigo-600 underline decoration-indigo-300 hover:decoration-indigo-600 dark:text-indigo-400"
          >
            {renderInline(m[3], k)}
          </a>
        ) : (
          <Fragment key={k}>{renderInline(m[3], k)}</Fragment>
        ),
      );
    } else if (m[5] !== undefined || m[6] !== undefined) {
      const url = (m[5] ?? m[6])!;
      out.push(
        <a
          key={k}
          href={url}
          target="_blank"
          rel="noopener noreferrer nofollow"
          className="text-indigo-600 underline decoration-indigo-300 hover:decoration-indigo-600 dark:text-indigo-400"
        >
          {url}
        </a>,
      );
    } else if (m[7] !== undefined || m[8] !== undefined) {
      out.push(<strong key={k}>{renderInline((m[7] ?? m[8])!, k)}</strong>);
    } else if (m[9] !== undefined) {
      out.push(<del key={k}>{renderInline(m[9], k)}</del>);
    } else if (m[10] !== undefined || m[11] !== undefined) {
      out.push(<em key={k}>{renderInline((m[10] ?? m[11])!, k)}</em>);
    } else if (m[12] !== undefined) {
      out.push(<br key={k} />);
    }
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function renderBlocks(blocks: Block[], prefix: string): ReactNode[] {
  return blocks.map((block, i) => {
    const key = `${prefix}.${i}`;
    switch (block.type) {
      case "heading": {
        const size = ["text-lg", "text-base", "text-sm", "text-sm", "text-sm", "text-sm"][block.level - 1];
        const Tag = `h${Math.min(6, block.level + 2)}` as "h3";
        return (
          <Tag key={key} className={`${size} mt-3 font-semibold first:mt-0`}>
            {renderInline(block.text, key)}
          </Tag>
        );
      }
      case "paragraph":
        return <p key={key}>{renderInline(block.text, key)}</p>;
      case "code":
        return <CodeBlock key={key} lang={block.lang} code={block.code} />;
      case "quote":
        return (
          <blockquote
            key={key}
            className="space-y-2 border-l-2 border-zinc-300 pl-3 text-zinc-600 dark:border-zinc-700 dark:text-zinc-400"
          >
            {renderBlocks(block.blocks, key)}
          </blockquote>
        );
      case "list": {
        const items = block.items.map((item, j) => (
          <li key={`${key}.${j}`} className="space-y-1 pl-1">
            {item.length === 1 && item[0]!.type === "paragraph"
              ? renderInline(item[0]!.text, `${key}.${j}`)
              : renderBlocks(item, `${key}.${j}`)}
          </li>
        ));
        return block.ordered ? (
          <ol key={key} start={block.start} className="list-decimal space-y-1 pl-6">
            {items}
          </ol>
        ) : (
          <ul key={key} className="list-disc space-y-1 pl-6">
            {items}
          </ul>
        );
      }
      case "table":
        return (
          <div key={key} className="overflow-x-auto">
            <table className="text-sm">
              <thead>
                <tr>
                  {block.head.map((cell, j) => (
                    <th
                      key={j}
                      style={{ textAlign: block.align[j] }}
                      className="border-b border-zinc-300 px-2 py-1 text-left font-semibold dark:border-zinc-700"
                    >
                      {renderInline(cell, `${key}.h${j}`)}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {block.rows.map((row, r) => (
                  <tr key={r} className="border-b border-zinc-200 dark:border-zinc-800">
                    {row.map((cell, j) => (
                      <td key={j} style={{ textAlign: block.align[j] }} className="px-2 py-1 align-top">
                        {renderInline(cell, `${key}.${r}.${j}`)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        );
      case "rule":
        return <hr key={key} className="border-zinc-200 dark:border-zinc-800" />;
    }
  });
}

function CodeBlock({ lang, code }: { lang: string; code: string }) {
  return (
    <div className="overflow-hidden rounded-md border border-zinc-200 bg-zinc-50 dark:border-zinc-800 dark:bg-zinc-950">
      {lang && (
        <div className="border-b border-zinc-200 px-3 py-1 font-mono text-[11px] text-zinc-500 dark:border-zinc-800">
          {lang}
        </div>
      )}
      <pre className="overflow-x-auto px-3 py-2 font-mono text-[12.5px] leading-relaxed">
        <code>{highlightCode(code, lang)}</code>
      </pre>
    </div>
  );
}

/** Assistant text rendered as Markdown. */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return <div className="space-y-2 text-sm leading-relaxed break-words">{renderBlocks(parseBlocks(text), "b")}</div>;
});
