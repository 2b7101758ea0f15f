import { requireCurrentUser } from "@/server/web/auth";
import { fileErrorResponse, readQuery, searchFiles, ZSearchQuery } from "@/server/web/workspace-files";

export const dynamic = "force-dynamic";

/** File names containing `?q=` (bounded; heavy and ignored folders skipped). */
export async function GET(req: Request, ctx: { params: Promise<{ slug: string }> }) {
  try {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const { q } = readQuery(req, ZSearchQuery);
    return Response.json({ data: await searchFiles(user.id, slug, q) });
  } catch (err) {
    return fileErrorResponse(err);
  }
}
