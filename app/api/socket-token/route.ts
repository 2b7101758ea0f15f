import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { mintSocketToken } from "@/server/shared/socket-token";
import { getEnv, requireSetting } from "@/server/env/env";

export const dynamic = "force-dynamic";

/** A 60-second token for clients that cannot send the session cookie with the handshake. */
export async function POST() {
  return handle(async () => {
    const user = await requireCurrentUser();
    const secret = requireSetting(getEnv(), "NEXTAUTH_SECRET");
    const token = await mintSocketToken(secret, user.id, 60);
    return Response.json({ data: { token, expiresInSec: 60 } });
  });
}
