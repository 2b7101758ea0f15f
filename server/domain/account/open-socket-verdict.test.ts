import { describe, expect, it } from "vitest";
import { judgeOpenSocket, RevocationReason, type OpenSocketFacts } from "./open-socket-verdict";

const facts = (over: Partial<OpenSocketFacts> = {}): OpenSocketFacts => ({
  account: { disabledAt: null, sessionVersion: 3 },
  claimedVersion: 3,
  listensTo: ["w1"],
  memberOf: new Set(["w1", "w2"]),
  ...over,
});

describe("judgeOpenSocket", () => {
  it("keeps a current session listening to its own workspaces", () => {
    expect(judgeOpenSocket(facts())).toBeUndefined();
    expect(judgeOpenSocket(facts({ listensTo: [], memberOf: new Set() }))).toBeUndefined();
  });

  it("closes the sockets of a deleted or disabled account", () => {
    expect(judgeOpenSocket(facts({ account: undefined }))).toBe(RevocationReason.deleted);
    expect(judgeOpenSocket(facts({ account: { disabledAt: new Date(0), sessionVersion: 3 } }))).toBe(
      RevocationReason.disabled,
    );
  });

  it("closes a socket opened before the account's last sign-out", () => {
    expect(judgeOpenSocket(facts({ account: { disabledAt: null, sessionVersion: 4 } }))).toBe(
      RevocationReason.signedOut,
    );
  });

  it("closes a socket listening to a workspace its user left, or to a session that is gone", () => {
    expect(judgeOpenSocket(facts({ listensTo: ["w1", "w3"] }))).toBe(RevocationReason.notAMember);
    expect(judgeOpenSocket(facts({ listensTo: [null] }))).toBe(RevocationReason.notAMember);
  });
});
