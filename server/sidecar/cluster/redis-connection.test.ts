import { createClient } from "redis";
import { describe, expect, it } from "vitest";
import { redisClientOptions } from "./redis-connection";

/** What node-redis makes of the options connectRedis gives it (nothing connects). */
function parsed(url: string) {
  const client = createClient(redisClientOptions(url, {}, () => false));
  return (client as unknown as { options: { socket: { host?: string; port?: number; tls?: boolean }; username?: string; password?: string; database?: number } }).options;
}

describe("redis URL", () => {
  it("rediss:// connects with TLS, with the URL's user, password, port and database", () => {
    const o = parsed("rediss://conduit:p%40ss@redis.internal:6380/2");
    expect(o.socket).toMatchObject({ host: "redis.internal", port: 6380, tls: true, connectTimeout: 5_000 });
    expect(o).toMatchObject({ username: "conduit", password: "p@ss", database: 2 });
  });

  it("redis:// without TLS; a password alone authenticates the default user", () => {
    const o = parsed("redis://:secret@127.0.0.1:6379");
    expect(o.socket).toMatchObject({ host: "127.0.0.1", port: 6379, tls: false });
    expect(o.password).toBe("secret");
    expect(o.username).toBeUndefined();
  });
});
