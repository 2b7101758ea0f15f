import { requireCurrentUser } from "@/server/web/auth";
import { discardSessionWorktree, getSessionWorktree, gitErrorResponse } from "@/server/web/workspace-git";

export const dynamic = "force-dynamic";

type Ctx = { params: Promise<{ slug: string; session: string }> };

/** The session's worktree and its branch's changes against the base; null for a session without one. */
export async function GET(_req: Request, ctx: Ctx) {
  try {
    const user = await requireCurrentUser();
    const { slug, session } = await ctx.params;
    return Response.json({ data: await getSessionWorktree(user.id, slug, session) }, { headers: { "cache-control": "no-store" } });
  } catch (err) {
    return gitErrorResponse(err);
  }
}

/** Discards the session's worktree and branch (owners; the session stopped). */
export async function DELETE(_req: Request, ctx: Ctx) {
  try {
    const user = await requireCurrentUser();
    const { slug, session } = await ctx.params;
    return Response.json({ data: await discardSessionWorktree(user, slug, session) });
  } catch (err) {
    return gitErrorResponse(err);
  }
}
