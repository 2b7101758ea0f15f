/**
 * Short-lived socket tokens: an HS256 JWT with audience "conduit-socket", minted by the web
 * process for a signed-in user and verified by the sidecar during the handshake. Uses only
 * `jose` and Web Crypto, so it is shared by both processes.
 */
import { jwtVerify, SignJWT } from "jose";

const audience = "conduit-socket";

function keyFor(secret: string): Uint8Array {
  return new TextEncoder().encode(`socket-token:${secret}`);
}

/** Mints a token for `userId` valid for `ttlSec` seconds. */
export async function mintSocketToken(secret: string, userId: string, ttlSec: number): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(userId)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(`${ttlSec}s`)
    .sign(keyFor(secret));
}

/** The user id in a valid, unexpired token, or undefined. */
export async function verifySocketToken(secret: string, token: string): Promise<string | undefined> {
  try {
    const { payload } = await jwtVerify(token, keyFor(secret), { audience, algorithms: ["HS256"] });
    return typeof payload.sub === "string" ? payload.sub : undefined;
  } catch {
    return undefined;
  }
}
