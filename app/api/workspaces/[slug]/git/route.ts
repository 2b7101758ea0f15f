import { requireCurrentUser } from "@/server/web/auth";
import { getGitStatus, gitErrorResponse } from "@/server/web/workspace-git";

export const dynamic = "force-dynamic";

/** Branch and changed files when the workspace is a git repository; `{repository: false}` otherwise. */
export async function GET(_req: Request, ctx: { params: Promise<{ slug: string }> }) {
  try {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    return Response.json({ data: await getGitStatus(user.id, slug) }, { headers: { "cache-control": "no-store" } });
  } catch (err) {
    return gitErrorResponse(err);
  }
}
