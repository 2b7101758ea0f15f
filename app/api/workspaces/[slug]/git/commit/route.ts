import { requireCurrentUser } from "@/server/web/auth";
import { readBody } from "@/server/web/http";
import { commitGit, gitErrorResponse, ZCommitInput } from "@/server/web/workspace-git";

export const dynamic = "force-dynamic";

/** Stages and commits `{paths, message}`, the signed-in user as author and committer. */
export async function POST(req: Request, ctx: { params: Promise<{ slug: string }> }) {
  try {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const input = await readBody(req, ZCommitInput);
    return Response.json({ data: await commitGit(user, slug, input) }, { status: 201 });
  } catch (err) {
    return gitErrorResponse(err);
  }
}
