import { setUserBudget, ZBudgetInput } from "@/server/web/budgets";
import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";

export const dynamic = "force-dynamic";

export async function PUT(req: Request, ctx: { params: Promise<{ id: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { id } = await ctx.params;
    const input = await readBody(req, ZBudgetInput);
    return Response.json({ data: await setUserBudget(user, id, input) });
  });
}
