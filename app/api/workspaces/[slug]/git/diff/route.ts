import { requireCurrentUser } from "@/server/web/auth";
import { readQuery } from "@/server/web/workspace-files";
import { getGitDiff, gitErrorResponse, ZDiffQuery } from "@/server/web/workspace-git";

export const dynamic = "force-dynamic";

/** One file against HEAD (`?path=`, and `orig=` for a rename's old name). */
export async function GET(req: Request, ctx: { params: Promise<{ slug: string }> }) {
  try {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    return Response.json({ data: await getGitDiff(user.id, slug, readQuery(req, ZDiffQuery)) }, { headers: { "cache-control": "no-store" } });
  } catch (err) {
    return gitErrorResponse(err);
  }
}
