import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { createMcpServer, listMcpServers, ZMcpServerCreate } from "@/server/web/mcp-servers";

export const dynamic = "force-dynamic";

export async function GET(_req: Request, ctx: { params: Promise<{ slug: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    return Response.json({ data: await listMcpServers(user.id, slug) });
  });
}

export async function POST(req: Request, ctx: { params: Promise<{ slug: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const input = await readBody(req, ZMcpServerCreate);
    return Response.json({ data: await createMcpServer(user.id, slug, input) }, { status: 201 });
  });
}
