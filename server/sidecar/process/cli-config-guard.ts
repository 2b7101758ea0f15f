/**
 * The CLI config directory is writable from inside a session's sandbox (the CLI keeps its
 * transcripts there), so a session could write its own `.claude.json` to mark the workspace as
 * trusted — after which the CLI 2.1.332 honours `.claude/settings.json` allow rules and skips
 * Conduit's approvals (measured in `workspace-settings.integration.test.ts`). Before every spawn
 * the sidecar takes those grants out again: trust in Conduit is an owner's decision, never a file
 * a session can write.
 *
 * The pure part (what is removed, what is set) is here; the file work runs in the config
 * directory's workspace door (`server/workspace-agent/ops/config.ts`): the sidecar itself never
 * opens a path inside a directory a session writes.
 */
import { configScope, workspaceDoor, type DoorScope } from "@/server/workspace-agent";

/** Per-project keys of `.claude.json` that grant something; removed before every spawn. */
export const projectGrantKeys: readonly string[] = [
  "hasTrustDialogAccepted",
  "allowedTools",
  "enabledMcpjsonServers",
  "enableAllProjectMcpServers",
  "hasTrustDialogHooksAccepted",
];

/** `config` without the grants of {@link projectGrantKeys}; the same object when it holds none. */
export function withoutProjectGrants(config: unknown): { config: unknown; changed: boolean } {
  if (typeof config !== "object" || config === null || Array.isArray(config)) return { config, changed: false };
  const projects = (config as { projects?: unknown }).projects;
  if (typeof projects !== "object" || projects === null) return { config, changed: false };
  let changed = false;
  const cleaned: Record<string, unknown> = {};
  for (const [dir, entry] of Object.entries(projects as Record<string, unknown>)) {
    if (typeof entry !== "object" || entry === null) {
      cleaned[dir] = entry;
      continue;
    }
    const copy = { ...(entry as Record<string, unknown>) };
    for (const key of projectGrantKeys) {
      if (key in copy) {
        delete copy[key];
        changed = true;
      }
    }
    cleaned[dir] = copy;
  }
  return changed ? { config: { ...config, projects: cleaned }, changed } : { config, changed };
}

/** `config` with the project at `workspaceRoot` marked trusted (the CLI's own dialog answer). */
export function withProjectTrust(config: unknown, workspaceRoot: string): unknown {
  const base = typeof config === "object" && config !== null && !Array.isArray(config) ? (config as Record<string, unknown>) : {};
  const projects = typeof base.projects === "object" && base.projects !== null ? (base.projects as Record<string, unknown>) : {};
  const entry = typeof projects[workspaceRoot] === "object" && projects[workspaceRoot] !== null ? (projects[workspaceRoot] as Record<string, unknown>) : {};
  return { ...base, projects: { ...projects, [workspaceRoot]: { ...entry, hasTrustDialogAccepted: true } } };
}

/** The config directory's door, or undefined when the directory is not there (nothing to guard). */
async function configDoorOf(configDir: string): Promise<DoorScope | undefined> {
  try {
    return await configScope(configDir);
  } catch {
    return undefined;
  }
}

async function writeConfig(scope: DoorScope, config: unknown): Promise<void> {
  await workspaceDoor().call(scope, "config.writeClaudeJson", { text: JSON.stringify(config, null, 2) });
}

/**
 * Marks the workspace trusted in `<configDir>/.claude.json`, for a workspace whose settings an
 * owner trusted (Conduit decides before every spawn; this is only how the CLI is told). The file
 * is read and replaced by the config directory's door: never through a link a session planted.
 */
export async function grantCliProjectTrust(configDir: string, workspaceRoot: string): Promise<void> {
  const scope = await configScope(configDir);
  const current = await workspaceDoor().call(scope, "config.readClaudeJson", {});
  let parsed: unknown = {};
  if (current.kind === "file") {
    try {
      parsed = JSON.parse(current.text);
    } catch {
      // unreadable: start from an empty config
    }
  }
  // anything but a regular file (a link, a pipe, one too large to read) is replaced, never followed
  await writeConfig(scope, withProjectTrust(parsed, workspaceRoot));
}

/**
 * Removes project grants from `<configDir>/.claude.json`; a missing file or one that is not JSON
 * is left alone (the CLI reads no grant from it). What is not a regular file there (a link the
 * CLI would follow to a file that grants, a pipe, a file too large to check) is replaced by an
 * empty config; a directory is left (the CLI reads nothing from it).
 */
export async function revokeCliProjectGrants(configDir: string): Promise<boolean> {
  const scope = await configDoorOf(configDir);
  if (!scope) return false;
  const current = await workspaceDoor().call(scope, "config.readClaudeJson", {});
  if (current.kind === "absent") return false;
  if (current.kind === "other") {
    if (current.type === "directory") return false;
    await writeConfig(scope, {});
    return true;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(current.text);
  } catch {
    return false;
  }
  const { config, changed } = withoutProjectGrants(parsed);
  if (!changed) return false;
  await writeConfig(scope, config);
  return true;
}
