import { describe, expect, it } from "vitest";
import { mintSocketToken, verifySocketToken } from "./socket-token";

const secret = "s".repeat(40);

describe("socket tokens", () => {
  it("round-trips the user id and the session version", async () => {
    const token = await mintSocketToken(secret, "user-1", 60, 4);
    expect(await verifySocketToken(secret, token)).toEqual({ userId: "user-1", sessionVersion: 4 });
    const unversioned = await mintSocketToken(secret, "user-1", 60);
    expect(await verifySocketToken(secret, unversioned)).toEqual({ userId: "user-1", sessionVersion: 0 });
  });

  it("refuses another secret, garbage and expired tokens", async () => {
    const token = await mintSocketToken(secret, "user-1", 60);
    expect(await verifySocketToken("t".repeat(40), token)).toBeUndefined();
    expect(await verifySocketToken(secret, "garbage")).toBeUndefined();
    const expired = await mintSocketToken(secret, "user-1", -10);
    expect(await verifySocketToken(secret, expired)).toBeUndefined();
  });
});
