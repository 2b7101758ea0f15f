/**
 * Short-lived socket tokens: an HS256 JWT with audience "conduit-socket", minted by the web
 * process for a signed-in user and verified by the sidecar during the handshake. Uses only
 * `jose` and Web Crypto, so it is shared by both processes. A token carries the session version
 * (`sv`) of the cookie it was minted from, so a sign-out voids the tokens minted before it too.
 */
import { jwtVerify, SignJWT } from "jose";

const audience = "conduit-socket";

function keyFor(secret: string): Uint8Array {
  return new TextEncoder().encode(`socket-token:${secret}`);
}

/** What a valid token says: whose it is, and the session version of the cookie it came from. */
export interface SocketTokenClaims {
  userId: string;
  sessionVersion: number;
}

/** Mints a token for `userId` valid for `ttlSec` seconds, carrying the cookie's `sessionVersion`. */
export async function mintSocketToken(
  secret: string,
  userId: string,
  ttlSec: number,
  sessionVersion = 0,
): Promise<string> {
  return new SignJWT({ sv: sessionVersion })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(userId)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(`${ttlSec}s`)
    .sign(keyFor(secret));
}

/** The claims of a valid, unexpired token, or undefined. A token without `sv` carries version 0. */
export async function verifySocketToken(secret: string, token: string): Promise<SocketTokenClaims | undefined> {
  try {
    const { payload } = await jwtVerify(token, keyFor(secret), { audience, algorithms: ["HS256"] });
    if (typeof payload.sub !== "string") return undefined;
    const sv = payload.sv;
    return { userId: payload.sub, sessionVersion: typeof sv === "number" && Number.isInteger(sv) ? sv : 0 };
  } catch {
    return undefined;
  }
}
