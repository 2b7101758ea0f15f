import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { readFileChange, ZFileChangeQuery } from "@/server/web/session-changes";
import { readQuery } from "@/server/web/workspace-files";

export const dynamic = "force-dynamic";

/** One file before and after a turn (`turn=<id>`) or the whole session (`session=1`); members read. */
export async function GET(req: Request, ctx: { params: Promise<{ slug: string; session: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug, session } = await ctx.params;
    const query = readQuery(req, ZFileChangeQuery);
    return Response.json({ data: await readFileChange(user.id, slug, session, query) }, { headers: { "cache-control": "no-store" } });
  });
}
