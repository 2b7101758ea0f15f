import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { FilesDrawer } from "@/components/files/files-drawer";
import { GitPanel } from "@/components/git/git-panel";
import { WorktreePanel } from "@/components/git/worktree-panel";
import { SessionView } from "@/components/session/session-view";
import { canPerform } from "@/server/domain/workspace/roles";
import { demoScenarioList } from "@/server/model-server/demo-scenarios";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { findCurrentUser, requirePageUser } from "@/server/web/auth";
import { sessionTitle } from "@/components/session/format";
import { getDb } from "@/server/db/client";
import { firstPromptsOf } from "@/server/db/session-events";
import { isDemoModel } from "@/server/web/demo";
import { findSession, readSessionPreview } from "@/server/web/sessions";
import { readNetworkPolicy } from "@/server/web/network-policy";
import { describeNetworkPolicy } from "@/server/domain/workspace/network-policy";

export const dynamic = "force-dynamic";

/** The tab names the session and its workspace (a member's only). */
export async function generateMetadata({ params }: { params: Promise<{ workspace: string; session: string }> }): Promise<Metadata> {
  const user = await findCurrentUser();
  if (!user) return {};
  const { workspace: slug, session: sessionId } = await params;
  const found = await findSession(user.id, slug, sessionId).catch(() => undefined);
  if (!found) return {};
  const firstPrompt = found.session.title ? undefined : (await firstPromptsOf(getDb(), [found.session.id]))[found.session.id];
  return { title: `${sessionTitle(found.session, firstPrompt)} · ${found.workspace.name}` };
}

export default async function SessionPage({ params }: { params: Promise<{ workspace: string; session: string }> }) {
  const user = await requirePageUser();
  const { workspace: slug, session: sessionId } = await params;
  const found = await findSession(user.id, slug, sessionId).catch((err: unknown) => {
    if (err instanceof AppError && err.code === ErrorCode.notFound) notFound();
    throw err;
  });
  const { workspace, session } = found;
  const [network, initialTail] = await Promise.all([readNetworkPolicy(user.id, workspace.slug), readSessionPreview(found)]);
  const networkDetail =
    network.mode === "open"
      ? "Tools in this session reach the network as the server does."
      : network.mode === "none"
        ? "Tools in this session have no network (the model still answers)."
        : `Tools in this session reach only: ${network.domains.join(", ")}`;
  return (
    <>
      <SessionView
        key={session.id}
        workspace={{ slug: workspace.slug, name: workspace.name, role: workspace.role, rootPath: workspace.rootPath, network: { label: describeNetworkPolicy(network), detail: networkDetail } }}
        initialSession={session}
        initialTail={initialTail}
        currentUser={{ id: user.id, name: user.name }}
        changesAside={
          // git belongs with the session's changes: the worktree's branch, then the repository's status and commit
          <div className="mt-4 space-y-4">
            <WorktreePanel slug={workspace.slug} sessionId={session.id} canMerge={canPerform(workspace.role, "manageSettings")} />
            <GitPanel slug={workspace.slug} canWrite={canPerform(workspace.role, "steer")} />
          </div>
        }
        demoScenarios={
          isDemoModel()
            ? demoScenarioList.map((s) => ({ name: s.name, triggers: [...s.triggers], description: s.description }))
            : undefined
        }
      />
      <FilesDrawer slug={workspace.slug} canWrite={canPerform(workspace.role, "steer")} />
    </>
  );
}
