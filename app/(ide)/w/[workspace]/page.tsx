import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { ApprovalSettingsPanel } from "@/components/approval/approval-settings-panel";
import { BudgetPanel } from "@/components/cost/budget-panel";
import { InvitationsPanel } from "@/components/account/invitations-panel";
import { FilesPane } from "@/components/files/files-pane";
import { GitPanel } from "@/components/git/git-panel";
import { MembersPanel } from "@/components/members-panel";
import { WorkspaceSettingsReview } from "@/components/workspace-settings-review";
import { WorkspaceNetworkPanel } from "@/components/workspace-network-panel";
import { WorkspaceMcpPanel } from "@/components/workspace-mcp-panel";
import { SessionList } from "@/components/session/session-list";
import { LiveRoleNotice } from "@/components/live-role";
import { canPerform } from "@/server/domain/workspace/roles";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { readApprovalSettings } from "@/server/web/approval-settings";
import { findCurrentUser, requirePageUser } from "@/server/web/auth";
import { readWorkspaceBudget } from "@/server/web/budgets";
import { listInvitations } from "@/server/web/invitations";
import { listSessions } from "@/server/web/sessions";
import { readSettingsReview } from "@/server/web/workspace-settings";
import { isGitWorkspace } from "@/server/web/workspace-git";
import { listMembers, requireWorkspaceAccess } from "@/server/web/workspaces";
import { readNetworkPolicy } from "@/server/web/network-policy";
import { listMcpServers } from "@/server/web/mcp-servers";

export const dynamic = "force-dynamic";

/** The tab names the workspace (a member's only: anyone else gets the plain title). */
export async function generateMetadata({ params }: { params: Promise<{ workspace: string }> }): Promise<Metadata> {
  const user = await findCurrentUser();
  if (!user) return {};
  const ws = await requireWorkspaceAccess(user.id, (await params).workspace, "read").catch(() => undefined);
  return ws ? { title: ws.name } : {};
}

export default async function WorkspacePage({ params }: { params: Promise<{ workspace: string }> }) {
  const user = await requirePageUser();
  const { workspace: slug } = await params;
  const {
    workspace: ws,
    sessions,
    settings,
    firstPrompts,
    nextCursor,
  } = await listSessions(user.id, slug).catch((err: unknown) => {
    if (err instanceof AppError && err.code === ErrorCode.notFound) notFound();
    throw err;
  });
  const [members, budget, approvalSettings, invitations, settingsReview, repository, network, mcpServers] = await Promise.all([
    listMembers(ws.id),
    readWorkspaceBudget(user.id, ws.slug),
    readApprovalSettings(user.id, ws.slug),
    ws.role === "owner" ? listInvitations(user, { workspaceSlug: ws.slug }) : Promise.resolve(undefined),
    // Owners review what the workspace's own Claude settings would add (they are not loaded).
    canPerform(ws.role, "manageSettings") ? readSettingsReview(user.id, ws.slug) : undefined,
    isGitWorkspace(user.id, ws.slug).catch(() => false),
    readNetworkPolicy(user.id, ws.slug),
    listMcpServers(user.id, ws.slug),
  ]);
  return (
    <div className="space-y-6" data-testid="workspace-page">
      <div>
        <h1 className="text-xl font-semibold [overflow-wrap:anywhere]">{ws.name}</h1>
        <p className="text-sm text-zinc-500">
          <span className="font-mono break-all">{ws.rootPath}</span> · you are <span data-testid="workspace-role">{ws.role}</span>
          {" · "}
          <Link
            href={`/history?workspace=${encodeURIComponent(ws.slug)}`}
            data-testid="workspace-history"
            className="hover:underline"
          >
            history
          </Link>
        </p>
      </div>
      <LiveRoleNotice workspaceId={ws.id} role={ws.role} />
      <SessionList
        slug={ws.slug}
        initialSessions={sessions}
        firstPrompts={firstPrompts}
        createRefusal={
          canPerform(ws.role, "steer")
            ? undefined
            : "You are a viewer here: you can watch sessions but not start or steer them."
        }
        bypassAllowed={settings.allowBypass}
        defaultMode={settings.defaultMode}
        initialNextCursor={nextCursor}
        members={members.map((m) => ({ userId: m.userId, name: m.name }))}
        worktreeAvailable={repository}
      />
      <section className="card space-y-3" aria-labelledby="files-heading">
        <h2 id="files-heading" className="text-sm font-medium text-zinc-500">
          Files
        </h2>
        <FilesPane slug={ws.slug} canWrite={canPerform(ws.role, "steer")} />
      </section>
      <GitPanel slug={ws.slug} canWrite={canPerform(ws.role, "steer")} />
      <BudgetPanel
        slug={ws.slug}
        limitUsd={budget.monthlyBudgetUsd}
        spentUsd={budget.spentUsd}
        canEdit={ws.role === "owner"}
      />
      <ApprovalSettingsPanel
        slug={ws.slug}
        deadlineSec={approvalSettings.approvalDeadlineSec}
        rules={approvalSettings.rules}
        canEdit={canPerform(ws.role, "manageSettings")}
      />
      {settingsReview && (
        <WorkspaceSettingsReview
          slug={ws.slug}
          files={settingsReview.files}
          grantsAnything={settingsReview.grantsAnything}
          digest={settingsReview.digest}
          trusted={settingsReview.trusted}
        />
      )}
      <WorkspaceNetworkPanel
        slug={ws.slug}
        mode={network.mode}
        domains={network.domains}
        canEdit={canPerform(ws.role, "manageSettings")}
        enforceable={network.enforceable}
      />
      <WorkspaceMcpPanel slug={ws.slug} servers={mcpServers} canEdit={canPerform(ws.role, "manageSettings")} />
      <MembersPanel slug={ws.slug} members={members} canManage={ws.role === "owner"} currentUserId={user.id} />
      {invitations && <InvitationsPanel invitations={invitations} workspaceSlug={ws.slug} renderedAt={new Date().toISOString()} />}
    </div>
  );
}
