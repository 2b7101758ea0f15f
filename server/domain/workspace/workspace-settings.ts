/**
 * What a workspace's own Claude Code settings would add if an owner trusted them: the files
 * `.claude/settings.json` and `.claude/settings.local.json` (and `.mcp.json`) sit in the
 * workspace, where any session or commit can write them. Conduit spawns the CLI without them
 * (see `settingSourceFlags` in the sidecar) until an owner has reviewed exactly these contents;
 * the trust is bound to {@link digestWorkspaceSettings}, so any later change needs a new review.
 * Pure: the caller reads the files.
 */

/** The files reviewed, relative to the workspace root. */
export const workspaceSettingsFiles = [".claude/settings.json", ".claude/settings.local.json", ".mcp.json"] as const;
export type WorkspaceSettingsFile = (typeof workspaceSettingsFiles)[number];

/** One hook command a settings file would run. */
export interface HookEntry {
  event: string;
  matcher: string | undefined;
  command: string;
}

/** What one file would add. */
export interface SettingsFileReview {
  file: WorkspaceSettingsFile;
  present: boolean;
  /** Why the file could not be read as settings (not JSON, too large, not a regular file). */
  problem?: string;
  /** `permissions.allow`: tool calls that would run without asking anyone. */
  allow: string[];
  ask: string[];
  deny: string[];
  /** `permissions.defaultMode`, e.g. `bypassPermissions`. */
  defaultMode?: string;
  /** Commands the CLI would run on its own (hooks, status line, helpers). */
  hooks: HookEntry[];
  /** `.mcp.json` servers (each one a program the CLI would start). */
  mcpServers: string[];
  /** Other top-level keys (env, model, apiKeyHelper…), listed so that nothing is trusted unseen. */
  otherKeys: string[];
}

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
  const review: SettingsFileReview = { file, present: text !== undefined || problem !== undefined, allow: [], ask: [], deny: [], hooks: [], mcpServers: [], otherKeys: [] };
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
  review.otherKeys = Object.keys(parsed).filter((key) => !["permissions", "hooks", "statusLine", ...commandKeys].includes(key));
  return review;
}

/** True when trusting `review` would let a session do more than it can now. */
export function fileGrantsAnything(review: SettingsFileReview): boolean {
  return (
    review.allow.length > 0 ||
    review.hooks.length > 0 ||
    review.mcpServers.length > 0 ||
    review.defaultMode !== undefined ||
    review.otherKeys.length > 0
  );
}

/** sha256 over each file's name and exact content (absent files count as absent). */
export async function digestWorkspaceSettings(contents: Readonly<Partial<Record<WorkspaceSettingsFile, string>>>): Promise<string> {
  const canonical = workspaceSettingsFiles
    .map((file) => `${file}\u0000${contents[file] === undefined ? "absent" : `present\u0000${contents[file]}`}`)
    .join("\u0001");
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The whole review from the files' contents (and any read problems). */
export async function reviewWorkspaceSettings(
  contents: Readonly<Partial<Record<WorkspaceSettingsFile, string>>>,
  problems: Readonly<Partial<Record<WorkspaceSettingsFile, string>>> = {},
): Promise<WorkspaceSettingsReview> {
  const files = workspaceSettingsFiles.map((file) => reviewSettingsFile(file, contents[file], problems[file]));
  return { files, grantsAnything: files.some(fileGrantsAnything), digest: await digestWorkspaceSettings(contents) };
}
