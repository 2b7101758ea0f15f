/**
 * Whether the CLI has a saved conversation to `--resume`. The CLI writes
 * `$CLAUDE_CONFIG_DIR/projects/<cwd, non-alphanumerics as "-">/<session id>.jsonl` once the first
 * turn reaches the model, not at spawn nor at `system/init`. Before that, `--resume <id>` fails
 * with "No conversation found", and after it `--session-id <id>` fails with "Session ID … is
 * already in use" — so a respawn must pick its flag by looking. Every project directory is
 * searched (one CLAUDE_CONFIG_DIR per workspace keeps that small), so the check does not depend
 * on how a given CLI version shortens long paths. The look is the config directory's workspace
 * door's (`config.transcriptExists`): the directory is a session's to write, so the sidecar does
 * not walk it itself; a project folder or transcript that is a link does not count.
 */
import { configScope, workspaceDoor } from "@/server/workspace-agent";

/** True when a transcript of `claudeSessionId` exists under `configDir` (false when the directory is missing). */
export async function claudeTranscriptExists(configDir: string, claudeSessionId: string): Promise<boolean> {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(claudeSessionId)) return false;
  let scope;
  try {
    scope = await configScope(configDir);
  } catch {
    return false;
  }
  return workspaceDoor().call(scope, "config.transcriptExists", { claudeSessionId });
}
