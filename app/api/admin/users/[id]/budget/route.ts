import { requireAdmin } from "@/server/web/admin";
import { setUserBudget, ZBudgetInput } from "@/server/web/budgets";
import { handle, readBody } from "@/server/web/http";

export const dynamic = "force-dynamic";

/** Sets a user's monthly budget (`{monthlyBudgetUsd: number | null}`). Admins only: 404 for anyone else signed in, 401 signed out. */
export async function PUT(req: Request, ctx: { params: Promise<{ id: string }> }) {
  return handle(async () => {
    const admin = await requireAdmin();
    const { id } = await ctx.params;
    const input = await readBody(req, ZBudgetInput);
    return Response.json({ data: await setUserBudget(admin, id, input) });
  });
}
