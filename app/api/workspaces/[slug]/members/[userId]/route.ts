import { z } from "zod";
import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { changeMemberRole, removeMember, requireWorkspaceAccess } from "@/server/web/workspaces";

export const dynamic = "force-dynamic";

type Ctx = { params: Promise<{ slug: string; userId: string }> };

const ZChangeRole = z.object({ role: z.enum(["owner", "editor", "viewer"], "Role must be owner, editor or viewer.") });

export async function PATCH(req: Request, ctx: Ctx) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug, userId } = await ctx.params;
    await requireWorkspaceAccess(user.id, slug, "manageMembers");
    const { role } = await readBody(req, ZChangeRole);
    await changeMemberRole(user.id, slug, userId, role);
    return Response.json({ data: { userId, role } });
  });
}

export async function DELETE(_req: Request, ctx: Ctx) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug, userId } = await ctx.params;
    await removeMember(user.id, slug, userId);
    return Response.json({ data: { userId } });
  });
}
