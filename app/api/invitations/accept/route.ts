import { z } from "zod";
import { findCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { acceptInvitationAsUser, acceptInvitationWithPassword } from "@/server/web/invitations";

export const dynamic = "force-dynamic";

const ZAccept = z.object({
  token: z.string().min(1).max(200),
  name: z.string().trim().max(100).optional(),
  password: z.string().max(256, "Use at most 256 characters.").optional(),
});

/**
 * With a password: creates the invited account (the browser then signs in with it). Without:
 * the signed-in person joins with their existing account.
 */
export async function POST(req: Request) {
  return handle(async () => {
    const input = await readBody(req, ZAccept);
    if (input.password !== undefined) {
      return Response.json({ data: await acceptInvitationWithPassword({ token: input.token, name: input.name, password: input.password }) }, { status: 201 });
    }
    const user = await findCurrentUser();
    if (!user) return Response.json({ error: { code: "unauthorized", message: "Sign in first, or set a password." } }, { status: 401 });
    return Response.json({ data: await acceptInvitationAsUser(user, input.token) });
  });
}
