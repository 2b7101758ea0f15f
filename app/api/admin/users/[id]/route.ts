import { ZAdminUserChange } from "@/server/shared/wire/admin";
import { requireAdmin } from "@/server/web/admin";
import { changeAccount } from "@/server/web/admin-users";
import { handle, readBody } from "@/server/web/http";

export const dynamic = "force-dynamic";

/** `{isAdmin}` makes or unmakes an admin; `{disabled}` disables or enables the account. Admins only: 404 for anyone else signed in, 401 signed out. */
export async function PATCH(req: Request, ctx: { params: Promise<{ id: string }> }) {
  return handle(async () => {
    const admin = await requireAdmin();
    const { id } = await ctx.params;
    const input = await readBody(req, ZAdminUserChange);
    await changeAccount(admin, id, input);
    return Response.json({ data: { ok: true } });
  });
}
