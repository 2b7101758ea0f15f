import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { revokeInvitation } from "@/server/web/invitations";

export const dynamic = "force-dynamic";

/** Revokes a pending invitation. */
export async function DELETE(_req: Request, ctx: { params: Promise<{ id: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    return Response.json({ data: await revokeInvitation(user, (await ctx.params).id) });
  });
}
