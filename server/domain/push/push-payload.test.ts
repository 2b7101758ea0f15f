import { describe, expect, it } from "vitest";
import {
  approvalPushPayload,
  defaultPushSettings,
  isGoneStatus,
  isPublicPushEndpoint,
  sessionPath,
  shouldPushFinishedTurn,
  turnFinishedPushPayload,
  ZPushPayload,
  ZPushSettings,
  ZPushSubscriptionJson,
} from "./push-payload";

const workspace = { slug: "my ws", name: "My workspace" };

describe("approvalPushPayload", () => {
  it("names the workspace, the session and what the tool wants, and opens the session", () => {
    const payload = approvalPushPayload({ id: "ap1", sessionId: "s/1", toolName: "Edit", input: { file_path: "src/a.ts", old_string: "x" }, sessionTitle: "Refactor", workspace });
    expect(payload).toEqual({
      kind: "approval",
      title: "Approval needed in My workspace · Refactor",
      body: "Edit: src/a.ts",
      url: "/w/my%20ws/s/s%2F1",
      tag: "approval:ap1",
    });
    expect(ZPushPayload.parse(payload)).toEqual(payload);
  });

  it("says when a subagent asks", () => {
    const base = { id: "a", sessionId: "s", toolName: "Bash", input: { command: "make test" }, sessionTitle: null, workspace };
    expect(approvalPushPayload({ ...base, subagent: { description: "Run the tests" } }).body).toBe("Subagent (Run the tests): Bash: make test");
    expect(approvalPushPayload({ ...base, subagent: { description: null } }).body).toBe("Subagent: Bash: make test");
    expect(approvalPushPayload({ ...base, subagent: null }).body).toBe("Bash: make test");
  });

  it("falls back to the tool's name and clips long commands to one short line", () => {
    expect(approvalPushPayload({ id: "a", sessionId: "s", toolName: "mcp__x__y", input: {}, sessionTitle: null, workspace }).body).toBe("mcp__x__y");
    const long = approvalPushPayload({ id: "a", sessionId: "s", toolName: "Bash", input: { command: `echo ${"x".repeat(500)}\nrm -rf /` }, sessionTitle: null, workspace });
    expect(long.body.length).toBe(180);
    expect(long.body.endsWith("…")).toBe(true);
    expect(long.body).not.toContain("\n");
    expect(long.title).toBe("Approval needed in My workspace");
  });
});

describe("turnFinishedPushPayload", () => {
  it("says how the turn ended with the reply's first words", () => {
    const ok = turnFinishedPushPayload({ sessionId: "s1", sessionTitle: "T", workspace, isError: false, resultText: "All   tests\npass." });
    expect(ok).toMatchObject({ kind: "turn-finished", title: "Turn finished in My workspace · T", body: "All tests pass.", tag: "turn:s1", url: "/w/my%20ws/s/s1" });
    const failed = turnFinishedPushPayload({ sessionId: "s1", sessionTitle: null, workspace, isError: true, resultText: "" });
    expect(failed).toMatchObject({ title: "Turn failed in My workspace", body: "The turn ended with an error." });
    expect(turnFinishedPushPayload({ sessionId: "s1", sessionTitle: null, workspace, isError: false, resultText: null }).body).toBe("Claude finished the turn.");
  });
});

describe("settings and decisions", () => {
  it("defaults to both on and refuses unknown or missing keys", () => {
    expect(defaultPushSettings).toEqual({ approvals: true, finishedTurns: true });
    expect(ZPushSettings.safeParse({ approvals: false, finishedTurns: true }).success).toBe(true);
    expect(ZPushSettings.safeParse({ approvals: false }).success).toBe(false);
    expect(ZPushSettings.safeParse({ approvals: "yes", finishedTurns: true }).success).toBe(false);
    expect(ZPushSettings.safeParse({ approvals: true, finishedTurns: true, extra: 1 }).success).toBe(false);
  });

  it("pushes a finished turn only to a prompter who wants it and is not watching", () => {
    expect(shouldPushFinishedTurn({ approvals: true, finishedTurns: true }, false)).toBe(true);
    expect(shouldPushFinishedTurn({ approvals: true, finishedTurns: true }, true)).toBe(false);
    expect(shouldPushFinishedTurn({ approvals: true, finishedTurns: false }, false)).toBe(false);
  });

  it("treats 404 and 410 as gone, nothing else", () => {
    expect([404, 410].every(isGoneStatus)).toBe(true);
    expect([200, 201, 400, 401, 403, 413, 429, 500].some(isGoneStatus)).toBe(false);
  });

  it("checks a browser's subscription JSON", () => {
    const good = { endpoint: "https://fcm.googleapis.com/fcm/send/abc", expirationTime: null, keys: { p256dh: "BNc_x-1", auth: "k8J=" } };
    expect(ZPushSubscriptionJson.parse(good)).toEqual(good);
    expect(ZPushSubscriptionJson.safeParse({ ...good, endpoint: "javascript:alert(1)" }).success).toBe(false);
    expect(ZPushSubscriptionJson.safeParse({ ...good, keys: { p256dh: "a b", auth: "x" } }).success).toBe(false);
    expect(ZPushSubscriptionJson.safeParse({ endpoint: good.endpoint }).success).toBe(false);
  });

  it("stores only public https push-service endpoints", () => {
    for (const ok of ["https://fcm.googleapis.com/fcm/send/x", "https://updates.push.services.mozilla.com/wpush/v2/x", "https://web.push.apple.com/Q"]) {
      expect(isPublicPushEndpoint(ok), ok).toBe(true);
    }
    for (const bad of [
      "http://fcm.googleapis.com/x",
      "https://127.0.0.1/x",
      "https://2130706433/x",
      "https://[::1]/x",
      "https://localhost/x",
      "https://a.localhost/x",
      "https://intranet/x",
      "https://user:pw@fcm.googleapis.com/x",
      "not a url",
    ]) {
      expect(isPublicPushEndpoint(bad), bad).toBe(false);
    }
  });

  it("builds the session page's path", () => {
    expect(sessionPath("a", "b")).toBe("/w/a/s/b");
  });
});
