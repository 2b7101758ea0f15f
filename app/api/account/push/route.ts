import { ZPushSettings } from "@/server/domain/push/push-payload";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { readPushState, updatePushSettings } from "@/server/web/push";

export const dynamic = "force-dynamic";

/** The public VAPID key, the account's push settings, how many browsers it subscribed (and, with `?endpoint=`, whether that one is). */
export async function GET(req: Request) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const endpoint = new URL(req.url).searchParams.get("endpoint");
    if (endpoint !== null && (endpoint === "" || endpoint.length > 2048)) throw new AppError(ErrorCode.invalidPayload, "endpoint: give a push subscription's endpoint URL.");
    return Response.json({ data: await readPushState(user, endpoint ?? undefined) });
  });
}

/** Changes what is pushed: approvals routed to me, turns that finish while I am away. */
export async function PATCH(req: Request) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const settings = await readBody(req, ZPushSettings);
    return Response.json({ data: await updatePushSettings(user, settings) });
  });
}
