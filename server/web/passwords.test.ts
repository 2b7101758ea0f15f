import { describe, expect, it } from "vitest";
import { checkPasswordStrength, hashPassword, verifyPassword } from "./passwords";

describe("password hashing", () => {
  it("hashes with argon2id and verifies only the right password", async () => {
    const hash = await hashPassword("correct-horse-42");
    expect(hash.startsWith("$argon2id$")).toBe(true);
    expect(await verifyPassword(hash, "correct-horse-42")).toBe(true);
    expect(await verifyPassword(hash, "correct-horse-43")).toBe(false);
  });

  it("salts: the same password hashes differently", async () => {
    expect(await hashPassword("correct-horse-42")).not.toBe(await hashPassword("correct-horse-42"));
  });

  it("treats a malformed hash as a mismatch", async () => {
    expect(await verifyPassword("not-a-hash", "x")).toBe(false);
  });
});

describe("checkPasswordStrength", () => {
  it.each([
    ["short1!", "at least 10"],
    ["aaaaaaaaaaaa", "Mix letters"],
    ["aaaaaaaa12", "more different"],
    ["alice-secret-99", "email name"],
  ])("refuses %s", (pw, reason) => {
    expect(checkPasswordStrength(pw, "alice@example.com")).toContain(reason);
  });

  it("accepts a mixed password and a long passphrase", () => {
    expect(checkPasswordStrength("correct-horse-42")).toBeUndefined();
    expect(checkPasswordStrength("correcthorsebatterystaple")).toBeUndefined();
  });
});
