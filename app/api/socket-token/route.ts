import { getServerSession } from "next-auth";
import { authOptions, requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { mintSocketToken } from "@/server/shared/socket-token";
import { sessionVersionOf } from "@/server/domain/account/session-validity";
import { getEnv, requireSetting } from "@/server/env/env";

export const dynamic = "force-dynamic";

/**
 * A 60-second token for clients that cannot send the session cookie with the handshake. It
 * carries the cookie's session version (checked current by `requireCurrentUser`), so signing
 * out voids it as it voids the cookie.
 */
export async function POST() {
  return handle(async () => {
    const user = await requireCurrentUser();
    const session = await getServerSession(authOptions());
    const secret = requireSetting(getEnv(), "NEXTAUTH_SECRET");
    const token = await mintSocketToken(
      secret,
      user.id,
      60,
      sessionVersionOf(session?.user as { sv?: unknown } | undefined),
    );
    return Response.json({ data: { token, expiresInSec: 60 } });
  });
}
