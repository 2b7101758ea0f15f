/**
 * A small syntax highlighter for code blocks in assistant text: comments, strings, numbers,
 * keywords and a few language-specific tokens. It only ever produces React text nodes inside
 * spans, so model output cannot inject markup.
 */
import type { ReactNode } from "react";

type TokenKind = "comment" | "string" | "number" | "keyword" | "literal" | "type" | "tag" | "attr" | "meta" | "punct";

interface Grammar {
  lineComment?: string[];
  blockComment?: [string, string][];
  strings: string[];
  keywords: Set<string>;
  literals?: Set<string>;
  /** Identifiers starting with a capital letter read as types. */
  capitalTypes?: boolean;
  variables?: boolean;
}

const words = (s: string) => new Set(s.split(/\s+/).filter(Boolean));

const jsKeywords = words(
  "abstract as async await break case catch class const continue debugger declare default delete do else enum export extends finally for from function get if implements import in instanceof interface keyof let new of private protected public readonly return satisfies set static super switch this throw try type typeof var void while with yield",
);

const grammars: Record<string, Grammar> = {
  js: {
    lineComment: ["//"],
    blockComment: [["/*", "*/"]],
    strings: ['"', "'", "`"],
    keywords: jsKeywords,
    literals: words("true false null undefined NaN Infinity"),
    capitalTypes: true,
  },
  json: { strings: ['"'], keywords: new Set(), literals: words("true false null") },
  py: {
    lineComment: ["#"],
    strings: ['"""', "'''", '"', "'"],
    keywords: words(
      "and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case",
    ),
    literals: words("True False None self"),
    capitalTypes: true,
  },
  sh: {
    lineComment: ["#"],
    strings: ['"', "'"],
    keywords: words(
      "if then else elif fi for while until do done case esac in function return export local set unset echo cd exit source sudo",
    ),
    variables: true,
  },
  go: {
    lineComment: ["//"],
    blockComment: [["/*", "*/"]],
    strings: ['"', "`", "'"],
    keywords: words(
      "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var",
    ),
    literals: words("true false nil iota"),
    capitalTypes: true,
  },
  rust: {
    lineComment: ["//"],
    blockComment: [["/*", "*/"]],
    strings: ['"'],
    keywords: words(
      "as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while",
    ),
    literals: words("true false None Some Ok Err"),
    capitalTypes: true,
  },
  css: { blockComment: [["/*", "*/"]], strings: ['"', "'"], keywords: words("@media @import @theme @apply important") },
  sql: {
    lineComment: ["--"],
    blockComment: [["/*", "*/"]],
    strings: ["'", '"'],
    keywords: words(
      "select from where and or not insert into values update set delete create table index on join left right inner outer group by order limit offset as primary key references null is in having distinct union all",
    ),
  },
  c: {
    lineComment: ["//"],
    blockComment: [["/*", "*/"]],
    strings: ['"', "'"],
    keywords: words(
      "auto break case char const continue default do double else enum extern float for goto if int long register return short signed sizeof static struct switch typedef union unsigned void volatile while class public private protected virtual template typename namespace using new delete",
    ),
    literals: words("true false NULL nullptr"),
    capitalTypes: true,
  },
  yaml: { lineComment: ["#"], strings: ['"', "'"], keywords: new Set(), literals: words("true false null yes no") },
};

const aliases: Record<string, string> = {
  javascript: "js",
  jsx: "js",
  ts: "js",
  typescript: "js",
  tsx: "js",
  mjs: "js",
  cjs: "js",
  python: "py",
  bash: "sh",
  shell: "sh",
  zsh: "sh",
  console: "sh",
  shellscript: "sh",
  golang: "go",
  rs: "rust",
  scss: "css",
  less: "css",
  cpp: "c",
  "c++": "c",
  h: "c",
  java: "c",
  cs: "c",
  csharp: "c",
  kotlin: "c",
  swift: "c",
  yml: "yaml",
  toml: "yaml",
  ini: "yaml",
  jsonc: "json",
  json5: "json",
};

/** The grammar for a fence's language tag, if known. */
function grammarFor(lang: string): Grammar | "markup" | undefined {
  const key = lang.toLowerCase();
  if (["html", "xml", "svg", "vue", "svelte"].includes(key)) return "markup";
  return grammars[aliases[key] ?? key];
}

const tokenClass: Record<TokenKind, string> = {
  comment: "text-zinc-500 italic",
  string: "text-emerald-700 dark:text-emerald-400",
  number: "text-amber-700 dark:text-amber-300",
  keyword: "text-violet-700 dark:text-violet-400",
  literal: "text-sky-700 dark:text-sky-400",
  type: "text-teal-700 dark:text-teal-300",
  tag: "text-rose-700 dark:text-rose-400",
  attr: "text-amber-700 dark:text-amber-300",
  meta: "text-sky-700 dark:text-sky-400",
  punct: "text-zinc-500",
};

/** Highlighted code as React nodes; unknown languages come back as plain text. */
export function highlightCode(code: string, lang: string): ReactNode[] {
  const grammar = grammarFor(lang);
  if (!grammar) return [code];
  const tokens = grammar === "markup" ? tokenizeMarkup(code) : tokenize(code, grammar);
  return tokens.map(([kind, text], i) =>
    kind ? (
      <span key={i} className={tokenClass[kind]}>
        {text}
      </span>
    ) : (
      text
    ),
  );
}

type Token = [TokenKind | undefined, string];

function tokenize(code: string, g: Grammar): Token[] {
  const out: Token[] = [];
  let plain = "";
  const flush = () => {
    if (plain) out.push([undefined, plain]);
    plain = "";
  };
  const push = (kind: TokenKind, text: string) => {
    flush();
    out.push([kind, text]);
  };
  let i = 0;
  while (i < code.length) {
    const rest = code.slice(i, i + 3);
    const line = g.lineComment?.find((c) => code.startsWith(c, i));
    if (line) {
      const end = code.indexOf("\n", i);
      const stop = end < 0 ? code.length : end;
      push("comment", code.slice(i, stop));
      i = stop;
      continue;
    }
    const block = g.blockComment?.find(([open]) => code.startsWith(open, i));
    if (block) {
      const end = code.indexOf(block[1], i + block[0].length);
      const stop = end < 0 ? code.length : end + block[1].length;
      push("comment", code.slice(i, stop));
      i = stop;
      continue;
    }
    const quote = g.strings.find((q) => rest.startsWith(q));
    if (quote) {
      let j = i + quote.length;
      while (j < code.length && !code.startsWith(quote, j)) {
        if (code[j] === "\\") j++;
        else if (code[j] === "\n" && quote.length === 1 && quote !== "`") break;
        j++;
      }
      const stop = Math.min(code.length, j + (code.startsWith(quote, j) ? quote.length : 0));
      push("string", code.slice(i, stop));
      i = stop;
      continue;
    }
    const ch = code[i]!;
    if (/[0-9]/.test(ch) && !/[\w$]/.test(code[i - 1] ?? "")) {
      const m = /^(0x[0-9a-fA-F_]+|\d[\d_]*(\.\d+)?([eE][+-]?\d+)?)[a-zA-Z]*/.exec(code.slice(i));
      const text = m?.[0] ?? ch;
      push("number", text);
      i += text.length;
      continue;
    }
    if (g.variables && ch === "$") {
      const m = /^\$(\{[^}]*\}|[\w@#?*!$-]+)/.exec(code.slice(i));
      if (m) {
        push("meta", m[0]);
        i += m[0].length;
        continue;
      }
    }
    if (/[A-Za-z_@$]/.test(ch)) {
      const m = /^[@$A-Za-z_][\w$-]*/.exec(code.slice(i));
      let word = m?.[0] ?? ch;
      if (!g.variables && !word.startsWith("@")) word = word.replace(/-.*$/, "");
      const lower = g === grammars.sql ? word.toLowerCase() : word;
      if (g.keywords.has(lower)) push("keyword", word);
      else if (g.literals?.has(word)) push("literal", word);
      else if (g.capitalTypes && /^[A-Z][a-z]/.test(word)) push("type", word);
      else plain += word;
      i += word.length;
      continue;
    }
    plain += ch;
    i++;
  }
  flush();
  return out;
}

function tokenizeMarkup(code: string): Token[] {
  const out: Token[] = [];
  const re = /(<!--[\s\S]*?-->)|(<\/?[A-Za-z][\w:-]*)|("[^"]*"|'[^']*')|(\s[A-Za-z_:][\w:.-]*(?==))|(\/?>)/g;
  let last = 0;
  for (let m = re.exec(code); m; m = re.exec(code)) {
    if (m.index > last) out.push([undefined, code.slice(last, m.index)]);
    const kind: TokenKind = m[1] ? "comment" : m[2] ? "tag" : m[3] ? "string" : m[4] ? "attr" : "tag";
    out.push([kind, m[0]]);
    last = m.index + m[0].length;
  }
  if (last < code.length) out.push([undefined, code.slice(last)]);
  return out;
}
