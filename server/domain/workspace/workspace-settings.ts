/**
 * What a workspace's own Claude Code configuration would add if an owner trusted it: the files
 * `.claude/settings.json` and `.claude/settings.local.json` (and `.mcp.json`), and the skills,
 * commands, agents and other trees the CLI reads from `.claude/` ({@link workspaceConfigDirs})
 * sit in the workspace, where any session or commit can write them. Conduit spawns the CLI
 * without any of them (see `settingSourceFlags` in the sidecar) until an owner has reviewed
 * exactly these contents; the trust is bound to {@link digestWorkspaceSettings}, so any later
 * change needs a new review. Pure: the caller reads the files.
 */

/** The files reviewed, relative to the workspace root. */
export const workspaceSettingsFiles = [".claude/settings.json", ".claude/settings.local.json", ".mcp.json"] as const;
export type WorkspaceSettingsFile = (typeof workspaceSettingsFiles)[number];

/**
 * The folders whose files a trusted CLI loads from the project (its `--project-config-root` help
 * names them): every file in them is part of the review and its digest. Skills, commands and
 * agents carry grants (`allowed-tools`, `permissionMode`, hooks); a skill's other files are what
 * its instructions run.
 */
export const workspaceConfigDirs = [
  ".claude/skills",
  ".claude/commands",
  ".claude/agents",
  ".claude/workflows",
  ".claude/routines",
  ".claude/output-styles",
] as const;

/** What a reviewed file is: a settings file, a skill's / command's / agent's definition, or another file of the trees. */
export type ReviewedFileKind = "settings" | "skill" | "command" | "agent" | "other";

/** One hook command a settings file would run. */
export interface HookEntry {
  event: string;
  matcher: string | undefined;
  command: string;
}

/** What one file would add. */
export interface SettingsFileReview {
  /** Relative to the workspace root: one of {@link workspaceSettingsFiles}, or a file under {@link workspaceConfigDirs}. */
  file: string;
  kind: ReviewedFileKind;
  present: boolean;
  /** Why the file could not be read as settings (not JSON, too large, not a regular file). */
  problem?: string;
  /**
   * `permissions.allow`: tool calls that would run without asking anyone. For a skill or a
   * command, its `allowed-tools`: they run without an approval once it is invoked.
   */
  allow: string[];
  ask: string[];
  deny: string[];
  /** `permissions.defaultMode`, e.g. `bypassPermissions`; an agent's `permissionMode`. */
  defaultMode?: string;
  /** Commands the CLI would run on its own (hooks, status line, helpers). */
  hooks: HookEntry[];
  /** `.mcp.json` servers (each one a program the CLI would start). */
  mcpServers: string[];
  /** Other top-level keys (env, model, apiKeyHelper…), listed so that nothing is trusted unseen. */
  otherKeys: string[];
  /** `env` of a settings file: variables the CLI would set (`ANTHROPIC_BASE_URL`, `HTTPS_PROXY` redirect its traffic). */
  env?: Record<string, string>;
  /** A definition's front matter as written (at most {@link maxFrontMatterChars} characters). */
  frontMatter?: string;
}

/** Front matter longer than this is shown cut (the digest covers all of it). */
export const maxFrontMatterChars = 4000;

/** The review of a workspace's settings. */
export interface WorkspaceSettingsReview {
  files: SettingsFileReview[];
  /** True when trusting would change anything a session can do. */
  grantsAnything: boolean;
  /** sha256 (hex) of the files' exact contents; what a trust decision is bound to. */
  digest: string;
}

// Top-level keys that name a command the CLI runs by itself.
const commandKeys = ["apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper"] as const;

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Parses one file's text (`undefined`: the file is absent). Never throws. */
export function reviewSettingsFile(file: WorkspaceSettingsFile, text: string | undefined, problem?: string): SettingsFileReview {
  const review: SettingsFileReview = { file, kind: "settings", present: text !== undefined || problem !== undefined, allow: [], ask: [], deny: [], hooks: [], mcpServers: [], otherKeys: [] };
  if (problem !== undefined) return { ...review, problem };
  if (text === undefined) return review;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ...review, problem: "not valid JSON (the CLI would ignore it; trusting it changes nothing until it is fixed)" };
  }
  if (!isObject(parsed)) return { ...review, problem: "not a JSON object" };
  if (file === ".mcp.json") {
    const servers = isObject(parsed.mcpServers) ? Object.keys(parsed.mcpServers) : [];
    return { ...review, mcpServers: servers, otherKeys: Object.keys(parsed).filter((key) => key !== "mcpServers") };
  }
  const permissions = isObject(parsed.permissions) ? parsed.permissions : {};
  review.allow = strings(permissions.allow);
  review.ask = strings(permissions.ask);
  review.deny = strings(permissions.deny);
  if (typeof permissions.defaultMode === "string") review.defaultMode = permissions.defaultMode;
  if (isObject(parsed.hooks)) {
    for (const [event, groups] of Object.entries(parsed.hooks)) {
      for (const group of Array.isArray(groups) ? groups : []) {
        if (!isObject(group)) continue;
        const matcher = typeof group.matcher === "string" ? group.matcher : undefined;
        for (const hook of Array.isArray(group.hooks) ? group.hooks : []) {
          if (isObject(hook) && typeof hook.command === "string") review.hooks.push({ event, matcher, command: hook.command });
        }
      }
    }
  }
  if (isObject(parsed.statusLine) && typeof parsed.statusLine.command === "string") {
    review.hooks.push({ event: "statusLine", matcher: undefined, command: parsed.statusLine.command });
  }
  for (const key of commandKeys) {
    if (typeof parsed[key] === "string") review.hooks.push({ event: key, matcher: undefined, command: parsed[key] });
  }
  if (isObject(parsed.env)) {
    review.env = Object.fromEntries(Object.entries(parsed.env).map(([name, value]) => [name, typeof value === "string" ? value : JSON.stringify(value)]));
  }
  review.otherKeys = Object.keys(parsed).filter((key) => !["permissions", "hooks", "statusLine", ...commandKeys].includes(key));
  return review;
}

/** What a file under {@link workspaceConfigDirs} is, from its path. */
export function definitionKind(file: string): ReviewedFileKind {
  if (/^\.claude\/skills\/[^/]+\/SKILL\.md$/.test(file)) return "skill";
  if (/^\.claude\/commands\/.+\.md$/.test(file)) return "command";
  if (/^\.claude\/agents\/.+\.md$/.test(file)) return "agent";
  return "other";
}

interface FrontMatter {
  raw: string;
  /** Top-level keys in order, each with its value: the text after the colon, or the block under it. */
  entries: { key: string; inline: string; block: string[] }[];
}

/**
 * The `---` block at the start of a Markdown definition, split into its top-level keys. Not a YAML
 * parser: enough to list the keys and read the simple values the CLI's grants take; the review
 * also shows the block as written, and the digest covers the whole file whatever this reads.
 */
export function splitFrontMatter(text: string): FrontMatter | undefined {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") return undefined;
  const end = lines.findIndex((line, i) => i > 0 && line.trim() === "---");
  if (end < 0) return undefined;
  const body = lines.slice(1, end);
  const entries: FrontMatter["entries"] = [];
  for (const line of body) {
    const key = /^([A-Za-z_][\w-]*)\s*:(.*)$/.exec(line);
    if (key) entries.push({ key: key[1] as string, inline: (key[2] as string).trim(), block: [] });
    else if (line.trim() !== "" && !line.trimStart().startsWith("#")) entries.at(-1)?.block.push(line);
  }
  return { raw: body.join("\n"), entries };
}

function unquote(value: string): string {
  const trimmed = value.trim();
  return /^(["']).*\1$/.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
}

/** A tool list as the CLI takes it: a YAML list, `[A, B]`, or `A, B` / `A B` (parentheses kept whole). */
export function toolList(entry: FrontMatter["entries"][number]): string[] {
  const items = entry.block.map((line) => /^\s*-\s*(.*)$/.exec(line)?.[1]).filter((item): item is string => item !== undefined);
  if (items.length > 0) return items.map(unquote).filter((item) => item !== "");
  let inline = entry.inline;
  if (inline.startsWith("[") && inline.endsWith("]")) inline = inline.slice(1, -1);
  const tools: string[] = [];
  let current = "";
  let depth = 0;
  for (const char of inline) {
    if (char === "(") depth += 1;
    if (char === ")") depth = Math.max(0, depth - 1);
    if (depth === 0 && (char === "," || /\s/.test(char))) {
      if (current.trim() !== "") tools.push(unquote(current));
      current = "";
    } else current += char;
  }
  if (current.trim() !== "") tools.push(unquote(current));
  return tools;
}

/** An agent's `mcpServers`: list items (names, or `- name:` maps) or the keys one level under it. */
function serverNames(entry: FrontMatter["entries"][number]): string[] {
  if (entry.block.length === 0) return toolList(entry);
  const indent = Math.min(...entry.block.map((line) => line.length - line.trimStart().length));
  return entry.block
    .filter((line) => line.length - line.trimStart().length === indent)
    .map((line) => unquote(line.trim().replace(/^-\s*/, "").replace(/\s*:.*$/, "")))
    .filter((name) => name !== "");
}

/** Reviews one file under {@link workspaceConfigDirs} (`undefined`: not read, see `problem`). Never throws. */
export function reviewDefinitionFile(file: string, text: string | undefined, problem?: string): SettingsFileReview {
  const kind = definitionKind(file);
  const review: SettingsFileReview = { file, kind, present: true, allow: [], ask: [], deny: [], hooks: [], mcpServers: [], otherKeys: [] };
  if (problem !== undefined) return { ...review, problem };
  if (text === undefined || kind === "other") return review;
  const front = splitFrontMatter(text);
  if (front === undefined) return review;
  review.frontMatter = front.raw.length > maxFrontMatterChars ? `${front.raw.slice(0, maxFrontMatterChars)}…` : front.raw;
  for (const entry of front.entries) {
    if (entry.key === "name" || entry.key === "description") continue;
    if (entry.key === "allowed-tools" && kind !== "agent") review.allow.push(...toolList(entry));
    else if (entry.key === "permissionMode" && kind === "agent") review.defaultMode = unquote(entry.inline);
    else if (entry.key === "hooks") review.hooks.push({ event: "hooks (front matter)", matcher: undefined, command: [entry.inline, ...entry.block].join("\n").trim() });
    else if (entry.key === "mcpServers") review.mcpServers.push(...serverNames(entry));
    else review.otherKeys.push(entry.key);
  }
  return review;
}

/** True when trusting `review` would let a session do more than it can now. */
export function fileGrantsAnything(review: SettingsFileReview): boolean {
  // A skill, command or agent is not loaded at all until trusted.
  if (review.kind === "skill" || review.kind === "command" || review.kind === "agent") return true;
  return (
    review.allow.length > 0 ||
    review.hooks.length > 0 ||
    review.mcpServers.length > 0 ||
    review.defaultMode !== undefined ||
    review.otherKeys.length > 0
  );
}

/**
 * sha256 over each settings file's name and exact content (absent files count as absent), then,
 * when there are any, each file under {@link workspaceConfigDirs} by path. A workspace without
 * those trees keeps the digest it had before they were reviewed.
 */
export async function digestWorkspaceSettings(
  contents: Readonly<Partial<Record<WorkspaceSettingsFile, string>>>,
  definitions: Readonly<Record<string, string>> = {},
): Promise<string> {
  let canonical = workspaceSettingsFiles
    .map((file) => `${file}\u0000${contents[file] === undefined ? "absent" : `present\u0000${contents[file]}`}`)
    .join("\u0001");
  const paths = Object.keys(definitions).sort();
  if (paths.length > 0) canonical += `\u0002${paths.map((file) => `${file}\u0000${definitions[file]}`).join("\u0001")}`;
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The whole review from the files' contents (and any read problems). */
export async function reviewWorkspaceSettings(
  contents: Readonly<Partial<Record<WorkspaceSettingsFile, string>>>,
  problems: Readonly<Partial<Record<WorkspaceSettingsFile, string>>> = {},
  definitions: Readonly<Record<string, string>> = {},
  definitionProblems: Readonly<Record<string, string>> = {},
): Promise<WorkspaceSettingsReview> {
  const files = [
    ...workspaceSettingsFiles.map((file) => reviewSettingsFile(file, contents[file], problems[file])),
    ...[...new Set([...Object.keys(definitions), ...Object.keys(definitionProblems)])]
      .sort()
      .map((file) => reviewDefinitionFile(file, definitions[file], definitionProblems[file])),
  ];
  return { files, grantsAnything: files.some(fileGrantsAnything), digest: await digestWorkspaceSettings(contents, definitions) };
}
