/**
 * Whether a past session's conversation can be resumed (`--resume`): the CLI needs its
 * conversation id and the transcript it wrote under the workspace's CLAUDE_CONFIG_DIR
 * (`<data>/claude-config/<workspaceId>/projects/<cwd>/<id>.jsonl`). The UI offers "Resume"
 * only then; otherwise it says why and that the next prompt starts a new conversation.
 */
import { access, readdir } from "node:fs/promises";
import path from "node:path";
import { getEnv } from "@/server/env/env";

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
  const projects = path.resolve(dataDir, "claude-config", session.workspaceId, "projects");
  const dirs = await readdir(projects, { withFileTypes: true }).catch(() => []);
  for (const dir of dirs) {
    if (!dir.isDirectory()) continue;
    const ok = await access(path.join(projects, dir.name, `${conversationId}.jsonl`)).then(
      () => true,
      () => false,
    );
    if (ok) return { resumable: true };
  }
  return {
    resumable: false,
    reason: "The CLI's transcript of this conversation is gone, so it cannot be resumed; a prompt starts a new one.",
  };
}
