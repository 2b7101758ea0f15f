/**
 * Whether the CLI has a saved conversation to `--resume`. The CLI writes
 * `$CLAUDE_CONFIG_DIR/projects/<cwd, non-alphanumerics as "-">/<session id>.jsonl` once the first
 * turn reaches the model, not at spawn nor at `system/init`. Before that, `--resume <id>` fails
 * with "No conversation found", and after it `--session-id <id>` fails with "Session ID … is
 * already in use" — so a respawn must pick its flag by looking. Every project directory is
 * searched (one CLAUDE_CONFIG_DIR per workspace keeps that small), so the check does not depend
 * on how a given CLI version shortens long paths.
 */
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";

/** True when a transcript of `claudeSessionId` exists under `configDir`. */
export function claudeTranscriptExists(configDir: string, claudeSessionId: string): boolean {
  const projects = path.join(configDir, "projects");
  let entries: string[];
  try {
    entries = readdirSync(projects);
  } catch {
    return false;
  }
  const file = `${claudeSessionId}.jsonl`;
  return entries.some((entry) => existsSync(path.join(projects, entry, file)));
}
