import { describe, expect, it } from "vitest";
import { canPerform, parseRole, refuseMemberChange, type Role } from "./roles";

describe("canPerform", () => {
  it.each<[Role, string, boolean]>([
    ["owner", "read", true],
    ["owner", "steer", true],
    ["owner", "manageMembers", true],
    ["owner", "manageSettings", true],
    ["editor", "read", true],
    ["editor", "steer", true],
    ["editor", "manageMembers", false],
    ["editor", "manageSettings", false],
    ["viewer", "read", true],
    ["viewer", "steer", false],
    ["viewer", "manageMembers", false],
    ["viewer", "manageSettings", false],
  ])("%s may %s: %s", (role, action, expected) => {
    expect(canPerform(role, action as Parameters<typeof canPerform>[1])).toBe(expected);
  });
});

describe("parseRole", () => {
  it("accepts the three roles only", () => {
    expect(parseRole("owner")).toBe("owner");
    expect(parseRole("admin")).toBeUndefined();
    expect(parseRole("")).toBeUndefined();
  });
});

describe("refuseMemberChange", () => {
  const members = [
    { userId: "a", role: "owner" as const },
    { userId: "b", role: "editor" as const },
  ];

  it("keeps at least one owner", () => {
    expect(refuseMemberChange(members, { targetUserId: "a", newRole: "viewer" })).toMatch(/at least one owner/);
    expect(refuseMemberChange(members, { targetUserId: "a", newRole: null })).toMatch(/at least one owner/);
  });

  it("allows changes that keep an owner", () => {
    expect(refuseMemberChange(members, { targetUserId: "b", newRole: "owner" })).toBeUndefined();
    expect(refuseMemberChange(members, { targetUserId: "b", newRole: null })).toBeUndefined();
    const twoOwners = [...members, { userId: "c", role: "owner" as const }];
    expect(refuseMemberChange(twoOwners, { targetUserId: "a", newRole: null })).toBeUndefined();
  });

  it("refuses a change for a non-member", () => {
    expect(refuseMemberChange(members, { targetUserId: "zz", newRole: "viewer" })).toMatch(/not a member/);
  });
});
