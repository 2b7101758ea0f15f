import { describe, expect, it } from "vitest";
import { AccountChange, refuseAccountChange, type AccountFacts } from "./admin-rules";

const admin = (id: string, over: Partial<AccountFacts> = {}): AccountFacts => ({
  id,
  isAdmin: true,
  disabled: false,
  ...over,
});
const person = (id: string, over: Partial<AccountFacts> = {}): AccountFacts => ({
  id,
  isAdmin: false,
  disabled: false,
  ...over,
});

describe("refuseAccountChange", () => {
  it("never unmakes or disables the last enabled administrator, the actor included", () => {
    for (const change of [AccountChange.revokeAdmin, AccountChange.disable]) {
      expect(refuseAccountChange({ actorId: "x", target: admin("a"), change, enabledAdminCount: 1 })).toMatch(
        /last administrator/,
      );
    }
    expect(
      refuseAccountChange({
        actorId: "a",
        target: admin("a"),
        change: AccountChange.revokeAdmin,
        enabledAdminCount: 1,
      }),
    ).toMatch(/last administrator/);
  });

  it("lets an admin step down or be disabled while another enabled admin remains", () => {
    expect(
      refuseAccountChange({
        actorId: "a",
        target: admin("a"),
        change: AccountChange.revokeAdmin,
        enabledAdminCount: 2,
      }),
    ).toBeUndefined();
    expect(
      refuseAccountChange({ actorId: "b", target: admin("a"), change: AccountChange.disable, enabledAdminCount: 2 }),
    ).toBeUndefined();
  });

  it("refuses disabling yourself, even with other admins", () => {
    expect(
      refuseAccountChange({ actorId: "a", target: admin("a"), change: AccountChange.disable, enabledAdminCount: 3 }),
    ).toMatch(/your own account/);
  });

  it("disables and enables other people, and makes only enabled accounts admins", () => {
    const base = { actorId: "a", enabledAdminCount: 1 };
    expect(refuseAccountChange({ ...base, target: person("p"), change: AccountChange.disable })).toBeUndefined();
    expect(
      refuseAccountChange({ ...base, target: person("p", { disabled: true }), change: AccountChange.enable }),
    ).toBeUndefined();
    expect(refuseAccountChange({ ...base, target: person("p"), change: AccountChange.grantAdmin })).toBeUndefined();
    expect(
      refuseAccountChange({ ...base, target: person("p", { disabled: true }), change: AccountChange.grantAdmin }),
    ).toMatch(/Enable this account/);
  });

  it("a disabled admin is not the one keeping the instance administered", () => {
    // Two admins, one of them disabled: the enabled one is the last.
    expect(
      refuseAccountChange({
        actorId: "x",
        target: admin("b", { disabled: true }),
        change: AccountChange.revokeAdmin,
        enabledAdminCount: 1,
      }),
    ).toBeUndefined();
  });
});
