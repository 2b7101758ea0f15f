import Link from "next/link";
import { InviteAccept } from "@/components/account/invite-accept";
import { SignOutButton } from "@/components/sign-out-button";
import { getEnv } from "@/server/env/env";
import { findCurrentUser } from "@/server/web/auth";
import { lookUpInvitation } from "@/server/web/invitations";

export const dynamic = "force-dynamic";

export default async function InvitationPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const found = await lookUpInvitation(token);
  if (!found.usable) {
    return (
      <div className="card space-y-4" data-testid="invite-unusable">
        <h2 className="text-lg font-medium">This invitation cannot be used</h2>
        <p data-testid="invite-unusable-message" className="text-sm">
          {found.message}
        </p>
        <p className="text-center text-sm text-zinc-500">
          <Link href="/signin" className="text-indigo-600 hover:underline">
            Sign in
          </Link>
        </p>
      </div>
    );
  }
  const env = getEnv();
  const user = await findCurrentUser();
  const target = found.workspace ? `the workspace ${found.workspace.name} as ${found.role}` : "Conduit";
  const ownPath = `/invite/${encodeURIComponent(token)}`;
  if (user && user.email.toLowerCase() !== found.email) {
    return (
      <div className="card space-y-4" data-testid="invite-wrong-account">
        <h2 className="text-lg font-medium">Invitation for someone else</h2>
        <p className="text-sm">
          This invitation is for <strong>{found.email}</strong>, but you are signed in as <strong>{user.email}</strong>. Sign out, then open the link
          again.
        </p>
        <SignOutButton callbackUrl={ownPath} />
      </div>
    );
  }
  if (!user && found.accountExists) {
    return (
      <div className="card space-y-4" data-testid="invite-sign-in-first">
        <h2 className="text-lg font-medium">You already have an account</h2>
        <p className="text-sm">
          An account with <strong>{found.email}</strong> exists. Sign in with it to join {target}.
        </p>
        <Link href={`/signin?callbackUrl=${encodeURIComponent(ownPath)}`} className="btn block w-full text-center" data-testid="invite-sign-in">
          Sign in to accept
        </Link>
      </div>
    );
  }
  return (
    <InviteAccept
      token={token}
      email={found.email}
      target={target}
      expiresAt={found.expiresAt}
      signedIn={Boolean(user)}
      github={Boolean(env.GITHUB_ID && env.GITHUB_SECRET)}
      landing={found.workspace ? `/w/${encodeURIComponent(found.workspace.slug)}` : "/workspaces"}
    />
  );
}
