import { z } from "zod";
import { isPublicPushEndpoint, ZPushSubscriptionJson } from "@/server/domain/push/push-payload";
import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { subscribePush, unsubscribePush } from "@/server/web/push";

export const dynamic = "force-dynamic";

const ZPublicEndpoint = z.string().refine(isPublicPushEndpoint, "endpoint must be a push service's https URL");

const ZSubscribe = ZPushSubscriptionJson.and(z.object({ endpoint: ZPublicEndpoint }));
const ZUnsubscribe = z.object({ endpoint: z.string().min(1).max(2048) }).strict();

/** Subscribes this browser for the signed-in account. */
export async function POST(req: Request) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const sub = await readBody(req, ZSubscribe);
    return Response.json({ data: await subscribePush(user, sub, req.headers.get("user-agent")) }, { status: 201 });
  });
}

/** Removes this browser's subscription (only ever the signed-in account's own). */
export async function DELETE(req: Request) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { endpoint } = await readBody(req, ZUnsubscribe);
    return Response.json({ data: await unsubscribePush(user, endpoint) });
  });
}
