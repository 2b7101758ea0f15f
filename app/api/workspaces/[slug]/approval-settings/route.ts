import { readApprovalSettings, setApprovalDeadline, ZApprovalDeadlineInput } from "@/server/web/approval-settings";
import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { requireWorkspaceAccess } from "@/server/web/workspaces";

export const dynamic = "force-dynamic";

type Ctx = { params: Promise<{ slug: string }> };

export async function GET(_req: Request, ctx: Ctx) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    return Response.json({ data: await readApprovalSettings(user.id, slug) });
  });
}

/** Sets the deadline: `{ approvalDeadlineSec: seconds | null }`. */
export async function PATCH(req: Request, ctx: Ctx) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    // Access before the body: a non-member learns not_found whatever they send.
    await requireWorkspaceAccess(user.id, slug, "manageSettings");
    const input = await readBody(req, ZApprovalDeadlineInput);
    return Response.json({ data: await setApprovalDeadline(user.id, slug, input) });
  });
}

export const PUT = PATCH;
