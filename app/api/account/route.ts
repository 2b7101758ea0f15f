import { z } from "zod";
import { readAccount, renameAccount } from "@/server/web/account";
import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";

export const dynamic = "force-dynamic";

const ZRename = z.object({ name: z.string().trim().min(1, "Enter a name.").max(100, "Use at most 100 characters.") });

export async function GET() {
  return handle(async () => Response.json({ data: await readAccount(await requireCurrentUser()) }));
}

/** Changes the account's name. */
export async function PATCH(req: Request) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { name } = await readBody(req, ZRename);
    return Response.json({ data: await renameAccount(user, name) });
  });
}
