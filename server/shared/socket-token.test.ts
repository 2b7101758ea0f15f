import { describe, expect, it } from "vitest";
import { mintSocketToken, verifySocketToken } from "./socket-token";

const secret = "s".repeat(40);

describe("socket tokens", () => {
  it("round-trips the user id", async () => {
    const token = await mintSocketToken(secret, "user-1", 60);
    expect(await verifySocketToken(secret, token)).toBe("user-1");
  });

  it("refuses another secret, garbage and expired tokens", async () => {
    const token = await mintSocketToken(secret, "user-1", 60);
    expect(await verifySocketToken("t".repeat(40), token)).toBeUndefined();
    expect(await verifySocketToken(secret, "garbage")).toBeUndefined();
    const expired = await mintSocketToken(secret, "user-1", -10);
    expect(await verifySocketToken(secret, expired)).toBeUndefined();
  });
});
