import { describe, expect, it } from "vitest";
import { hasSessionCookie, SESSION_COOKIE_NAMES } from "./session-cookie";

describe("hasSessionCookie", () => {
  it.each([
    ["next-auth.session-token=abc", true],
    ["__Secure-next-auth.session-token=abc", true],
    ["x=1;next-auth.session-token.0=a; next-auth.session-token.1=b", true],
    ["next-auth.session-token=", false],
    ['next-auth.session-token=""', false],
    ["next-auth.session-token-evil=abc", false],
    ["next-auth.session-token.x=abc", false],
    ["next-auth.csrf-token=abc; theme=dark", false],
    ["", false],
  ])("%s → %s", (header, expected) => {
    expect(hasSessionCookie(header)).toBe(expected);
  });

  it("handles a missing header and custom names", () => {
    expect(hasSessionCookie(null)).toBe(false);
    expect(hasSessionCookie("authjs.session-token=abc", ["authjs.session-token"])).toBe(true);
    expect(SESSION_COOKIE_NAMES).toContain("next-auth.session-token");
  });
});
