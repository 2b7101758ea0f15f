import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { listMembers, requireWorkspaceAccess } from "@/server/web/workspaces";

export const dynamic = "force-dynamic";

export async function GET(_req: Request, ctx: { params: Promise<{ slug: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const ws = await requireWorkspaceAccess(user.id, slug, "read");
    return Response.json({ data: { ...ws, members: await listMembers(ws.id) } });
  });
}
