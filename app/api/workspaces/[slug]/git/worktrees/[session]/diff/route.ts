import { requireCurrentUser } from "@/server/web/auth";
import { readQuery } from "@/server/web/workspace-files";
import { getSessionWorktreeDiff, gitErrorResponse, ZWorktreeDiffQuery } from "@/server/web/workspace-git";

export const dynamic = "force-dynamic";

/** One file of the session's branch against where it left its base (`?path=`, relative to the worktree). */
export async function GET(req: Request, ctx: { params: Promise<{ slug: string; session: string }> }) {
  try {
    const user = await requireCurrentUser();
    const { slug, session } = await ctx.params;
    const { path } = readQuery(req, ZWorktreeDiffQuery);
    return Response.json({ data: await getSessionWorktreeDiff(user.id, slug, session, path) }, { headers: { "cache-control": "no-store" } });
  } catch (err) {
    return gitErrorResponse(err);
  }
}
