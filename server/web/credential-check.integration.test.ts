// The sign-in check against a real database: one answer for an unknown email and a wrong
// password, the disabled account named only to someone with its password, and an unknown email
// verified against the dummy hash (one argon2 verification, as for a known email).
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import * as passwords from "./passwords";
import { checkCredentials, dummyPasswordHash } from "./credential-check";

let fixtures: SessionFixtures;
const right = "the-right-password-42";

beforeAll(async () => {
  fixtures = await createSessionFixtures();
  const hash = await passwords.hashPassword(right);
  await fixtures.db.user.update({ where: { id: fixtures.owner.id }, data: { passwordHash: hash } });
  await fixtures.db.user.update({ where: { id: fixtures.editor.id }, data: { passwordHash: hash, disabledAt: new Date() } });
});
afterAll(async () => {
  await fixtures?.close();
});

describe("checkCredentials", () => {
  it("signs in the right password, and answers `wrong` alike for an unknown email, a wrong password and a GitHub-only account", async () => {
    expect(await checkCredentials(fixtures.db, fixtures.owner.email, right)).toEqual({ ok: true, user: fixtures.owner });
    expect(await checkCredentials(fixtures.db, "nobody@example.test", right)).toEqual({ ok: false, reason: "wrong" });
    expect(await checkCredentials(fixtures.db, fixtures.owner.email, "not-it-at-all-1")).toEqual({ ok: false, reason: "wrong" });
    // Vera has no password (GitHub only): even the dummy's own password cannot match
    expect(await checkCredentials(fixtures.db, fixtures.viewer.email, right)).toEqual({ ok: false, reason: "wrong" });
  });

  it("names a disabled account only to someone who knows its password", async () => {
    expect(await checkCredentials(fixtures.db, fixtures.editor.email, right)).toEqual({ ok: false, reason: "disabled" });
    expect(await checkCredentials(fixtures.db, fixtures.editor.email, "not-it-at-all-1")).toEqual({ ok: false, reason: "wrong" });
  });

  it("verifies an unknown email against the dummy argon2id hash, made once", async () => {
    const dummy = await dummyPasswordHash();
    expect(dummy).toMatch(/^\$argon2id\$/);
    expect(await dummyPasswordHash()).toBe(dummy);
    const verify = vi.spyOn(passwords, "verifyPassword");
    try {
      await checkCredentials(fixtures.db, "someone-else@example.test", "whatever-it-is-9");
      expect(verify).toHaveBeenCalledTimes(1);
      expect(verify).toHaveBeenCalledWith(dummy, "whatever-it-is-9");
    } finally {
      verify.mockRestore();
    }
  });
});
