import { z } from "zod";
import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { addMember, listMembers, requireWorkspaceAccess } from "@/server/web/workspaces";

export const dynamic = "force-dynamic";

const ZAddMember = z.object({
  email: z.string().trim().toLowerCase().pipe(z.email("Enter a valid email address.")),
  role: z.enum(["owner", "editor", "viewer"], "Role must be owner, editor or viewer."),
});

export async function GET(_req: Request, ctx: { params: Promise<{ slug: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const ws = await requireWorkspaceAccess(user.id, (await ctx.params).slug, "read");
    return Response.json({ data: await listMembers(ws.id) });
  });
}

export async function POST(req: Request, ctx: { params: Promise<{ slug: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    // membership is checked before the body, so a non-member learns nothing from validation
    await requireWorkspaceAccess(user.id, slug, "manageMembers");
    const input = await readBody(req, ZAddMember);
    return Response.json({ data: await addMember(user.id, slug, input.email, input.role) }, { status: 201 });
  });
}
