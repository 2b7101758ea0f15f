import { z } from "zod";
import { changePassword } from "@/server/web/account";
import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";

export const dynamic = "force-dynamic";

const ZChange = z.object({
  currentPassword: z.string().max(256),
  newPassword: z.string().max(256, "Use at most 256 characters."),
});

/** Changes the password; every cookie of the account is void afterwards (sign in again). */
export async function POST(req: Request) {
  return handle(async () => {
    const user = await requireCurrentUser();
    await changePassword(user, await readBody(req, ZChange));
    return Response.json({ data: { changed: true } });
  });
}
