import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { findSession } from "@/server/web/sessions";

export const dynamic = "force-dynamic";

/** One session as lists and headers show it. */
export async function GET(_req: Request, ctx: { params: Promise<{ slug: string; session: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug, session } = await ctx.params;
    return Response.json({ data: (await findSession(user.id, slug, session)).session });
  });
}
