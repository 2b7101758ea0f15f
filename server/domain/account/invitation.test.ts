import { describe, expect, it } from "vitest";
import { invitationExpiry, invitationStatusOf, unusableInvitationMessage } from "./invitation";

const now = new Date("2026-12-01T12:00:00Z");
const later = (ms: number) => new Date(now.getTime() + ms);

describe("invitationStatusOf", () => {
  it("is pending before expiry and expired from the expiry instant on", () => {
    const row = { expiresAt: later(1000), usedAt: null, revokedAt: null };
    expect(invitationStatusOf(row, now)).toBe("pending");
    expect(invitationStatusOf(row, later(999))).toBe("pending");
    expect(invitationStatusOf(row, later(1000))).toBe("expired");
  });

  it("keeps used and revoked final, also after the expiry", () => {
    expect(invitationStatusOf({ expiresAt: later(-5), usedAt: now, revokedAt: null }, now)).toBe("used");
    expect(invitationStatusOf({ expiresAt: later(-5), usedAt: null, revokedAt: now }, now)).toBe("revoked");
    expect(invitationStatusOf({ expiresAt: later(5), usedAt: null, revokedAt: now }, now)).toBe("revoked");
  });
});

describe("invitationExpiry", () => {
  it("defaults to 7 days and accepts 1 to 30", () => {
    expect(invitationExpiry(now).toISOString()).toBe("2026-12-08T12:00:00.000Z");
    expect(invitationExpiry(now, 1).toISOString()).toBe("2026-12-02T12:00:00.000Z");
    expect(invitationExpiry(now, 30).toISOString()).toBe("2026-12-31T12:00:00.000Z");
  });

  it("refuses other lifetimes", () => {
    for (const days of [0, 31, 1.5, -1, Number.NaN]) expect(() => invitationExpiry(now, days)).toThrow(RangeError);
  });
});

describe("unusableInvitationMessage", () => {
  it("says what happened, per status", () => {
    expect(unusableInvitationMessage("used")).toMatch(/already been used/);
    expect(unusableInvitationMessage("expired")).toMatch(/expired/);
    expect(unusableInvitationMessage("revoked")).toMatch(/revoked/);
    expect(unusableInvitationMessage("unknown")).toMatch(/not valid/);
  });
});
