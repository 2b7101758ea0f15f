import { describe, expect, it } from "vitest";
import { readSessionCookie } from "./read-session-cookie";

describe("readSessionCookie", () => {
  it("reads the plain and the secure cookie", () => {
    expect(readSessionCookie("a=1; next-auth.session-token=abc; b=2")).toBe("abc");
    expect(readSessionCookie("__Secure-next-auth.session-token=xyz")).toBe("xyz");
  });

  it("joins chunked cookies in order", () => {
    expect(readSessionCookie("next-auth.session-token.1=def; next-auth.session-token.0=abc")).toBe("abcdef");
  });

  it("returns undefined without a session cookie", () => {
    expect(readSessionCookie(undefined)).toBeUndefined();
    expect(readSessionCookie("other=1")).toBeUndefined();
  });
});
