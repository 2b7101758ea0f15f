import { revokePermissionRule } from "@/server/web/approval-settings";
import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";

export const dynamic = "force-dynamic";

export async function DELETE(_req: Request, ctx: { params: Promise<{ slug: string; ruleId: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug, ruleId } = await ctx.params;
    await revokePermissionRule(user.id, slug, ruleId);
    return Response.json({ data: { id: ruleId } });
  });
}
