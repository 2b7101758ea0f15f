/**
 * The CLI config directory is writable from inside a session's sandbox (the CLI keeps its
 * transcripts there), so a session could write its own `.claude.json` to mark the workspace as
 * trusted — after which the CLI 2.1.332 honours `.claude/settings.json` allow rules and skips
 * Conduit's approvals (measured in `workspace-settings.integration.test.ts`). Before every spawn
 * the sidecar takes those grants out again: trust in Conduit is an owner's decision, never a file
 * a session can write.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

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

/**
 * Marks the workspace trusted in `<configDir>/.claude.json`, for a workspace whose settings an
 * owner trusted (Conduit decides before every spawn; this is only how the CLI is told).
 */
export function grantCliProjectTrust(configDir: string, workspaceRoot: string): void {
  const file = path.join(configDir, ".claude.json");
  let parsed: unknown = {};
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    // missing or unreadable: start from an empty config
  }
  const temp = `${file}.conduit-${process.pid}`;
  writeFileSync(temp, JSON.stringify(withProjectTrust(parsed, workspaceRoot), null, 2), { mode: 0o600 });
  renameSync(temp, file);
}

/** Removes project grants from `<configDir>/.claude.json`; a missing or unreadable file is left alone. */
export function revokeCliProjectGrants(configDir: string): boolean {
  const file = path.join(configDir, ".claude.json");
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return false;
  }
  const { config, changed } = withoutProjectGrants(parsed);
  if (!changed) return false;
  const temp = `${file}.conduit-${process.pid}`;
  writeFileSync(temp, JSON.stringify(config, null, 2), { mode: 0o600 });
  renameSync(temp, file);
  return true;
}
