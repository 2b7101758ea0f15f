import { describe, expect, it } from "vitest";
import { describeAuditObject, sessionIdOf, type AuditLookups } from "./admin-audit-links";

const lookups: AuditLookups = {
  workspaces: new Map([["w1", { slug: "team-a", name: "Team A" }]]),
  sessions: new Map([["s1", { title: "Fix the build", workspaceId: "w1" }]]),
  users: new Map([["u2", { email: "bea@example.test" }]]),
};

describe("describeAuditObject", () => {
  it("links an approval to its session's page, named by tool and session title", () => {
    const row = {
      objectType: "approval",
      objectId: "a1",
      workspaceId: "w1",
      details: JSON.stringify({ sessionId: "s1", toolName: "Bash" }),
    };
    expect(sessionIdOf(row)).toBe("s1");
    expect(describeAuditObject(row, lookups)).toEqual({
      type: "approval",
      id: "a1",
      label: "Bash in “Fix the build”",
      href: "/w/team-a/s/s1",
    });
  });

  it("links a member change to the workspace page, named by the member's email", () => {
    const row = {
      objectType: "membership",
      objectId: "u2",
      workspaceId: "w1",
      details: JSON.stringify({ role: "editor" }),
    };
    expect(describeAuditObject(row, lookups)).toMatchObject({ label: "member bea@example.test", href: "/w/team-a" });
  });

  it("links an account to its row in the user list; a deleted one keeps the email from the details", () => {
    expect(
      describeAuditObject({ objectType: "user", objectId: "u2", workspaceId: null, details: null }, lookups),
    ).toMatchObject({
      label: "bea@example.test",
      href: "/admin/users?q=bea%40example.test",
    });
    expect(
      describeAuditObject(
        { objectType: "user", objectId: "gone", workspaceId: null, details: '{"email":"old@example.test"}' },
        lookups,
      ),
    ).toMatchObject({ label: "old@example.test" });
  });

  it("gives no link when the workspace is gone, and survives bad details", () => {
    const row = { objectType: "approval", objectId: "a2", workspaceId: "w9", details: "not json" };
    expect(describeAuditObject(row, lookups)).toEqual({
      type: "approval",
      id: "a2",
      label: "tool request",
      href: null,
    });
  });
});
