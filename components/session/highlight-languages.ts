/**
 * The fence tags the code highlighter knows, mapped to the shiki grammar that renders them.
 * Kept apart from shiki itself so deciding whether to load it costs nothing.
 */
const aliases: Record<string, string> = {
  js: "javascript",
  javascript: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  jsx: "jsx",
  ts: "typescript",
  typescript: "typescript",
  mts: "typescript",
  cts: "typescript",
  tsx: "tsx",
  json: "json",
  jsonc: "json",
  json5: "json",
  sh: "shellscript",
  bash: "shellscript",
  zsh: "shellscript",
  shell: "shellscript",
  shellscript: "shellscript",
  console: "shellscript",
  py: "python",
  python: "python",
  go: "go",
  golang: "go",
  rs: "rust",
  rust: "rust",
  css: "css",
  html: "html",
  xml: "html",
  svg: "html",
  sql: "sql",
  yaml: "yaml",
  yml: "yaml",
  diff: "diff",
  patch: "diff",
  md: "markdown",
  markdown: "markdown",
};

export type ShikiLanguage =
  | "javascript"
  | "jsx"
  | "typescript"
  | "tsx"
  | "json"
  | "shellscript"
  | "python"
  | "go"
  | "rust"
  | "css"
  | "html"
  | "sql"
  | "yaml"
  | "diff"
  | "markdown";

/** The shiki grammar for a fence's language tag, or undefined (shown as plain text). */
export function shikiLanguageOf(tag: string): ShikiLanguage | undefined {
  const key = tag.trim().toLowerCase();
  return Object.hasOwn(aliases, key) ? (aliases[key] as ShikiLanguage) : undefined;
}
