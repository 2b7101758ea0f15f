/**
 * shiki, fine-grained: the core, the JavaScript regex engine (no WebAssembly), two themes and
 * a handful of grammars, each a dynamic import, so a bundler splits them into chunks that load
 * only when a code block in that language is shown. Loaded itself only through a dynamic
 * import from `./highlight`.
 */
import { createHighlighterCore, type HighlighterCore, type LanguageInput } from "shiki/core";
import { createJavaScriptRegexEngine } from "shiki/engine/javascript";
import type { ShikiLanguage } from "./highlight-languages";

const grammars: Record<ShikiLanguage, LanguageInput> = {
  javascript: () => import("shiki/langs/javascript.mjs"),
  jsx: () => import("shiki/langs/jsx.mjs"),
  typescript: () => import("shiki/langs/typescript.mjs"),
  tsx: () => import("shiki/langs/tsx.mjs"),
  json: () => import("shiki/langs/json.mjs"),
  shellscript: () => import("shiki/langs/shellscript.mjs"),
  python: () => import("shiki/langs/python.mjs"),
  go: () => import("shiki/langs/go.mjs"),
  rust: () => import("shiki/langs/rust.mjs"),
  css: () => import("shiki/langs/css.mjs"),
  html: () => import("shiki/langs/html.mjs"),
  sql: () => import("shiki/langs/sql.mjs"),
  yaml: () => import("shiki/langs/yaml.mjs"),
  diff: () => import("shiki/langs/diff.mjs"),
  markdown: () => import("shiki/langs/markdown.mjs"),
};

/** One token: its text and its inline style (a `light-dark()` colour that follows the page's colour scheme). */
export interface HighlightedToken {
  content: string;
  style: Record<string, string>;
}
export type HighlightedLines = HighlightedToken[][];

let highlighter: Promise<HighlighterCore> | undefined;
const loaded = new Map<ShikiLanguage, Promise<void>>();

function getHighlighter(): Promise<HighlighterCore> {
  highlighter ??= createHighlighterCore({
    themes: [import("shiki/themes/github-light.mjs"), import("shiki/themes/github-dark.mjs")],
    langs: [],
    engine: createJavaScriptRegexEngine({ forgiving: true }),
  }).catch((err: unknown) => {
    highlighter = undefined;
    throw err;
  });
  return highlighter;
}

async function withLanguage(language: ShikiLanguage): Promise<HighlighterCore> {
  const h = await getHighlighter();
  let ready = loaded.get(language);
  if (!ready) {
    ready = h.loadLanguage(grammars[language]).catch((err: unknown) => {
      loaded.delete(language);
      throw err;
    });
    loaded.set(language, ready);
  }
  await ready;
  return h;
}

/** The code's tokens per line, coloured for light and dark schemes. */
export async function highlight(code: string, language: ShikiLanguage): Promise<HighlightedLines> {
  const h = await withLanguage(language);
  const { tokens } = h.codeToTokens(code, {
    lang: language,
    themes: { light: "github-light", dark: "github-dark" },
    // Per-theme colours as variables; combined below, since shiki's own "light-dark()" mode
    // (4.6.0) gives every token of a line the first token's light colour.
    defaultColor: false,
  });
  return tokens.map((line) => line.map((token) => ({ content: token.content, style: styleOf(token.htmlStyle) })));
}

function styleOf(vars: Record<string, string> | undefined): Record<string, string> {
  const light = vars?.["--shiki-light"];
  const dark = vars?.["--shiki-dark"];
  if (light && dark) return { color: `light-dark(${light}, ${dark})` };
  return light || dark ? { color: (light ?? dark)! } : {};
}
