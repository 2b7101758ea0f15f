import { z } from "zod";
import { invitationCookie } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { lookUpInvitation } from "@/server/web/invitations";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { cookies } from "next/headers";

export const dynamic = "force-dynamic";

const ZIntent = z.object({ token: z.string().min(1).max(200) });

/**
 * Before "Continue with GitHub" on an invitation page: keeps the token in a short-lived
 * http-only cookie, so the GitHub callback can accept the invitation for a verified email.
 */
export async function POST(req: Request) {
  return handle(async () => {
    const { token } = await readBody(req, ZIntent);
    const found = await lookUpInvitation(token);
    if (!found.usable) throw new AppError(ErrorCode.expired, found.message);
    const secure = new URL(req.url).protocol === "https:" || req.headers.get("x-forwarded-proto") === "https";
    (await cookies()).set(invitationCookie, token, { httpOnly: true, sameSite: "lax", path: "/", maxAge: 30 * 60, secure });
    return Response.json({ data: { ok: true } });
  });
}
