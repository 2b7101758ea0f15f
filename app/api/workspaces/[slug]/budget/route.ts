import { readWorkspaceBudget, setWorkspaceBudget, ZBudgetInput } from "@/server/web/budgets";
import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";

export const dynamic = "force-dynamic";

export async function GET(_req: Request, ctx: { params: Promise<{ slug: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    return Response.json({ data: await readWorkspaceBudget(user.id, slug) });
  });
}

export async function PUT(req: Request, ctx: { params: Promise<{ slug: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const input = await readBody(req, ZBudgetInput);
    return Response.json({ data: await setWorkspaceBudget(user.id, slug, input) });
  });
}
