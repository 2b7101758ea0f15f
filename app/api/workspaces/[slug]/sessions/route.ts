import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { parseSessionListQuery } from "@/server/web/session-list-query";
import { listSessions } from "@/server/web/sessions";

export const dynamic = "force-dynamic";

/**
 * One page of the workspace's sessions (read-only; sessions are created over the socket).
 * Query: `status`, `archived` (active | archived | all), `creator`, `q`, `cursor`, `limit`.
 */
export async function GET(req: Request, ctx: { params: Promise<{ slug: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const query = parseSessionListQuery(new URL(req.url).searchParams);
    const { sessions, firstPrompts, nextCursor } = await listSessions(user.id, slug, query);
    return Response.json({ data: { sessions, firstPrompts, nextCursor } });
  });
}
