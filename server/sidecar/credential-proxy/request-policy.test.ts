import { describe, expect, it } from "vitest";
import { allowedRoutes, checkRequest } from "./request-policy";

describe("the credential proxy's allow-list", () => {
  it("allows the Messages API and token counting, with their query", () => {
    expect(checkRequest("POST", "/v1/messages?beta=true")).toEqual({ allowed: true, route: "messages", pathAndQuery: "/v1/messages?beta=true" });
    expect(checkRequest("POST", "/v1/messages")).toMatchObject({ allowed: true, route: "messages" });
    expect(checkRequest("POST", "/v1/messages/count_tokens?beta=true")).toMatchObject({ allowed: true, route: "count_tokens" });
    expect(allowedRoutes.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/messages", "POST /v1/messages/count_tokens"]);
  });

  it.each([
    ["POST", "/v1/files"],
    ["POST", "/v1/messages/batches"],
    ["GET", "/v1/models"],
    ["GET", "/v1/messages"],
    ["HEAD", "/api/hello"],
    ["DELETE", "/v1/messages"],
    ["POST", "/v1/complete"],
    ["POST", "/v1"],
  ])("refuses %s %s with 403 naming it", (method, path) => {
    const decision = checkRequest(method, path);
    expect(decision).toMatchObject({ allowed: false, status: 403, errorType: "permission_error" });
    expect(!decision.allowed && decision.message).toContain(`${method} ${path} is not allowed`);
  });

  it.each([
    "/../x",
    "/%2e%2e/x",
    "/%2E%2E/v1/messages",
    "//v1/messages",
    "//evil.example/v1/messages",
    "/v1//messages",
    "/v1/messages/",
    "/v1/messages/..%2f..%2fx",
    "/v1/messages/../messages",
    "/v1/./messages",
    "/v1/messages/.",
    "/v1%2fmessages",
    "/v1/messages%00",
    "/v1\\messages",
    "\\v1\\messages",
    "/v1/m%65ssages",
    "http://evil.example/v1/messages",
    "v1/messages",
    "*",
    "/v1/messages#x",
    "/v1/messages?beta=true#frag",
    "/v1/messages?x=../../y/",
    "/v1/messages?x=\\",
    "/v1/mes sages",
    "/v1/méssages",
  ])("refuses %s with 400 (never normalised into an allowed path)", (path) => {
    expect(checkRequest("POST", path)).toMatchObject({ allowed: false, status: 400, errorType: "invalid_request_error" });
  });

  it("refuses an empty or missing request line", () => {
    expect(checkRequest(undefined, undefined)).toMatchObject({ allowed: false, status: 400 });
    expect(checkRequest("POST", "")).toMatchObject({ allowed: false, status: 400 });
    expect(checkRequest("POST", `/v1/messages?${"a".repeat(9000)}`)).toMatchObject({ allowed: false, status: 400 });
  });

  it("shows control characters escaped in its message", () => {
    const decision = checkRequest("POST", "/v1/x\n\u001b[31m");
    const message = decision.allowed ? "" : decision.message;
    expect(message).not.toContain("\n");
    expect(message).not.toContain("\u001b");
    expect(message).toContain("\\u001b");
  });
});
