import { notFound } from "next/navigation";
import { InvitationsPanel } from "@/components/account/invitations-panel";
import { getDb } from "@/server/db/client";
import { getEnv } from "@/server/env/env";
import { requirePageUser } from "@/server/web/auth";
import { listInvitations } from "@/server/web/invitations";

export const dynamic = "force-dynamic";

const policyText = {
  invite: "invite: people join through invitation links made by admins and workspace owners.",
  open: "open: anyone who can reach this Conduit may sign up; invitations also work.",
  closed: "closed: nobody signs up alone, and only admins' invitation links bring in new people.",
} as const;

/** Every invitation of the instance; admins only (everyone else: 404, so the page is not revealed). */
export default async function AdminInvitationsPage() {
  const user = await requirePageUser();
  if (!user.isAdmin) notFound();
  const [invitations, workspaces] = await Promise.all([
    listInvitations(user, {}),
    getDb().workspace.findMany({ select: { slug: true, name: true }, orderBy: { name: "asc" } }),
  ]);
  return (
    <div className="space-y-6" data-testid="admin-invitations-page">
      <div>
        <h1 className="text-xl font-semibold">Invitations</h1>
        <p className="text-sm text-zinc-500">
          Sign-up policy (<span className="font-mono">CONDUIT_SIGNUP</span>) is <span data-testid="admin-signup-policy">{policyText[getEnv().CONDUIT_SIGNUP]}</span>
        </p>
      </div>
      <InvitationsPanel invitations={invitations} workspaces={workspaces} renderedAt={new Date().toISOString()} />
    </div>
  );
}
