import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { deleteMcpServer, updateMcpServer, ZMcpServerUpdate } from "@/server/web/mcp-servers";

export const dynamic = "force-dynamic";

export async function PATCH(req: Request, ctx: { params: Promise<{ slug: string; id: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug, id } = await ctx.params;
    const input = await readBody(req, ZMcpServerUpdate);
    return Response.json({ data: await updateMcpServer(user.id, slug, id, input) });
  });
}

export async function DELETE(_req: Request, ctx: { params: Promise<{ slug: string; id: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug, id } = await ctx.params;
    return Response.json({ data: await deleteMcpServer(user.id, slug, id) });
  });
}
