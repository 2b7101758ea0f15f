import { requireCurrentUser } from "@/server/web/auth";
import { readBody } from "@/server/web/http";
import { gitErrorResponse, mergeSessionWorktreeBack, ZMergeInput } from "@/server/web/workspace-git";

export const dynamic = "force-dynamic";

/** Merges (or rebases, `{strategy}`) the session's branch back into its base (owners); conflicts answer 409 with the files. */
export async function POST(req: Request, ctx: { params: Promise<{ slug: string; session: string }> }) {
  try {
    const user = await requireCurrentUser();
    const { slug, session } = await ctx.params;
    const input = await readBody(req, ZMergeInput);
    return Response.json({ data: await mergeSessionWorktreeBack(user, slug, session, input) });
  } catch (err) {
    return gitErrorResponse(err);
  }
}
