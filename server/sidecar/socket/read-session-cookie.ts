/**
 * Reads next-auth's session cookie from a Cookie header. next-auth splits large tokens into
 * `name.0`, `name.1`, … chunks; they are joined in order.
 */
export const sessionCookieNames = ["__Secure-next-auth.session-token", "next-auth.session-token"] as const;

export function readSessionCookie(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  const cookies = new Map<string, string>();
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    try {
      cookies.set(name, decodeURIComponent(value));
    } catch {
      cookies.set(name, value);
    }
  }
  for (const name of sessionCookieNames) {
    const whole = cookies.get(name);
    if (whole) return whole;
    const chunks: string[] = [];
    for (let i = 0; cookies.has(`${name}.${i}`); i++) chunks.push(cookies.get(`${name}.${i}`)!);
    if (chunks.length > 0) return chunks.join("");
  }
  return undefined;
}
