import { ZPushSettings } from "@/server/domain/push/push-payload";
import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { readPushState, updatePushSettings } from "@/server/web/push";

export const dynamic = "force-dynamic";

/** The public VAPID key, the account's push settings and how many browsers it subscribed. */
export async function GET() {
  return handle(async () => Response.json({ data: await readPushState(await requireCurrentUser()) }));
}

/** Changes what is pushed: approvals routed to me, turns that finish while I am away. */
export async function PATCH(req: Request) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const settings = await readBody(req, ZPushSettings);
    return Response.json({ data: await updatePushSettings(user, settings) });
  });
}
