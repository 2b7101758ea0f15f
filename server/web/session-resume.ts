/**
 * Whether a past session's conversation can be resumed (`--resume`): the CLI needs its
 * conversation id and the transcript it wrote under the workspace's CLAUDE_CONFIG_DIR
 * (`<data>/claude-config/<workspaceId>/projects/<cwd>/<id>.jsonl`). The UI offers "Resume"
 * only then; otherwise it says why and that the next prompt starts a new conversation. The
 * config directory is a session's to write, so the look is its door's (`config.transcriptExists`:
 * a project folder or transcript that is a link does not count), never this process's.
 */
import path from "node:path";
import { getEnv } from "@/server/env/env";
import { configScope, workspaceDoor } from "@/server/workspace-agent";

export interface Resumability {
  resumable: boolean;
  /** Why not, in a sentence for people. */
  reason?: string;
}

export async function resumabilityOf(
  session: { id: string; workspaceId: string; claudeSessionId: string | null },
  hasTurns: boolean,
  dataDir: string = getEnv().CONDUIT_DATA_DIR,
): Promise<Resumability> {
  if (!hasTurns)
    return { resumable: false, reason: "No turn finished in this session, so there is no conversation to resume." };
  const conversationId = session.claudeSessionId ?? session.id;
  const configDir = path.resolve(/*turbopackIgnore: true*/ dataDir, "claude-config", session.workspaceId);
  const found =
    /^[A-Za-z0-9_-]{1,128}$/.test(conversationId) &&
    (await configScope(configDir).then(
      (scope) => workspaceDoor().call(scope, "config.transcriptExists", { claudeSessionId: conversationId }),
      () => false, // no config directory: nothing was ever saved
    ));
  if (found) return { resumable: true };
  return {
    resumable: false,
    reason: "The CLI's transcript of this conversation is gone, so it cannot be resumed; a prompt starts a new one.",
  };
}
