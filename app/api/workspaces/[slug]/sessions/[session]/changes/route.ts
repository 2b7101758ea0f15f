import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { readSessionChanges } from "@/server/web/session-changes";

export const dynamic = "force-dynamic";

/** The session's file changes per turn and as a whole; members read. */
export async function GET(_req: Request, ctx: { params: Promise<{ slug: string; session: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug, session } = await ctx.params;
    return Response.json({ data: await readSessionChanges(user.id, slug, session) }, { headers: { "cache-control": "no-store" } });
  });
}
