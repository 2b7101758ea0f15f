import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashInvitationToken, newInvitationToken } from "./invitations";

describe("invitation tokens", () => {
  it("are 32 random bytes in base64url, stored only as their sha256", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const { token, tokenHash } = newInvitationToken();
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token, "base64url")).toHaveLength(32);
      expect(tokenHash).toBe(createHash("sha256").update(token).digest("hex"));
      expect(tokenHash).not.toContain(token);
      seen.add(token);
    }
    expect(seen.size).toBe(200);
  });

  it("hash the same token the same way, and different tokens differently", () => {
    const { token } = newInvitationToken();
    expect(hashInvitationToken(token)).toBe(hashInvitationToken(token));
    expect(hashInvitationToken(`${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`)).not.toBe(hashInvitationToken(token));
  });
});
