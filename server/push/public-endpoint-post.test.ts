import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { isPublicAddress, NonPublicEndpoint, postToPushService } from "./public-endpoint-post";

describe("isPublicAddress", () => {
  it("refuses this host, private networks, link-local, CGNAT, multicast and mapped addresses", () => {
    for (const address of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "::1", "::", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:8.8.8.8", "64:ff9b::a00:1"]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });
  it("accepts public addresses", () => {
    for (const address of ["8.8.8.8", "142.250.74.110", "172.32.0.1", "2607:f8b0:4004:800::200e", "2a00:1450:4001::1"]) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });
  it("refuses what is not an address", () => {
    expect(isPublicAddress("push.example.com")).toBe(false);
  });
});

describe("postToPushService", () => {
  const withServer = async (run: (port: number, hits: () => number) => Promise<void>) => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits += 1;
      res.writeHead(201).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      await run((server.address() as AddressInfo).port, () => hits);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  };
  const post = { method: "POST", headers: {}, body: new Uint8Array([1, 2, 3]), timeoutMs: 5_000 };

  it("never connects to a name that resolves to this host", async () => {
    await withServer(async (port, hits) => {
      await expect(postToPushService(`http://localhost:${port}/push`, post)).rejects.toBeInstanceOf(NonPublicEndpoint);
      await expect(postToPushService(`http://127.0.0.1:${port}/push`, post)).rejects.toBeInstanceOf(NonPublicEndpoint);
      expect(hits()).toBe(0);
    });
  });

  it("posts when non-public endpoints are allowed (tests), and reports the status", async () => {
    await withServer(async (port, hits) => {
      await expect(postToPushService(`http://localhost:${port}/push`, { ...post, allowNonPublic: true })).resolves.toEqual({ status: 201 });
      expect(hits()).toBe(1);
    });
  });
});
