import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { listSessions } from "@/server/web/sessions";

export const dynamic = "force-dynamic";

/** The workspace's sessions (read-only; sessions are created over the socket). */
export async function GET(_req: Request, ctx: { params: Promise<{ slug: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const { sessions } = await listSessions(user.id, slug);
    return Response.json({ data: sessions });
  });
}
