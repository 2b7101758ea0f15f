import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { readNetworkPolicy, setNetworkPolicy, ZNetworkPolicyInput } from "@/server/web/network-policy";

export const dynamic = "force-dynamic";

export async function GET(_req: Request, ctx: { params: Promise<{ slug: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    return Response.json({ data: await readNetworkPolicy(user.id, slug) });
  });
}

export async function PUT(req: Request, ctx: { params: Promise<{ slug: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const policy = await readBody(req, ZNetworkPolicyInput);
    return Response.json({ data: await setNetworkPolicy(user.id, slug, policy) });
  });
}
