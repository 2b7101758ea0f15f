import { describe, expect, it } from "vitest";
import { defaultLanding, safeCallbackPath, signInHref } from "./callback-url";

describe("safeCallbackPath", () => {
  it.each([
    ["/w/team/s/abc", "/w/team/s/abc"],
    ["/history?workspace=team&q=deploy", "/history?workspace=team&q=deploy"],
    ["/w/team#files", "/w/team#files"],
    ["/inbox", "/inbox"],
    ["/invite/tok%2Den", "/invite/tok%2Den"],
    ["/w/../admin", "/admin"],
  ])("keeps the same-site path %s", (raw, expected) => {
    expect(safeCallbackPath(raw)).toBe(expected);
  });

  it.each([
    "//evil.com",
    "//evil.com/w/x",
    "https://evil.com",
    "http://127.0.0.1:3000/workspaces",
    "/\\evil.com",
    "/\\/evil.com",
    "\\\\evil.com",
    "/%5Cevil.com",
    "/%2F/evil.com",
    "/%2fevil.com",
    "javascript:alert(1)",
    "data:text/html,hi",
    "/\tevil.com",
    "/\t/evil.com",
    "/\n/evil.com",
    "/w/x\\..\\..\\evil",
    "evil.com",
    "",
    "/signin",
    "/signin?callbackUrl=%2Fw",
    "/signup",
  ])("refuses %j and falls back to the workspaces", (raw) => {
    expect(safeCallbackPath(raw)).toBe(defaultLanding);
  });

  it("falls back for missing, overlong and non-string values, to the fallback given", () => {
    expect(safeCallbackPath(undefined)).toBe(defaultLanding);
    expect(safeCallbackPath(null, "/inbox")).toBe("/inbox");
    expect(safeCallbackPath(`/${"a".repeat(3000)}`)).toBe(defaultLanding);
    expect(safeCallbackPath(["/w"] as unknown as string)).toBe(defaultLanding);
  });
});

describe("signInHref", () => {
  it("carries the page asked for, encoded", () => {
    expect(signInHref("/w/team/s/abc")).toBe("/signin?callbackUrl=%2Fw%2Fteam%2Fs%2Fabc");
    expect(signInHref("/history?workspace=a&q=b")).toBe("/signin?callbackUrl=%2Fhistory%3Fworkspace%3Da%26q%3Db");
  });

  it("is plain /signin for the default landing, the root or an unsafe path", () => {
    expect(signInHref("/workspaces")).toBe("/signin");
    expect(signInHref("/")).toBe("/signin");
    expect(signInHref("//evil.com")).toBe("/signin");
    expect(signInHref(undefined)).toBe("/signin");
  });

  it("adds a reason", () => {
    expect(signInHref("/account", { error: "disabled" })).toBe("/signin?error=disabled&callbackUrl=%2Faccount");
  });
});
