import { requireCurrentUser } from "@/server/web/auth";
import { readBody } from "@/server/web/http";
import { discardGit, gitErrorResponse, ZDiscardInput } from "@/server/web/workspace-git";

export const dynamic = "force-dynamic";

/** Discards one file's working change `{path, confirmDelete}` (a file HEAD lacks is deleted only when confirmed). */
export async function POST(req: Request, ctx: { params: Promise<{ slug: string }> }) {
  try {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const input = await readBody(req, ZDiscardInput);
    return Response.json({ data: await discardGit(user, slug, input) });
  } catch (err) {
    return gitErrorResponse(err);
  }
}
