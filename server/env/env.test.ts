import { describe, expect, it } from "vitest";
import { EnvError, parseEnv } from "./env";

describe("parseEnv", () => {
  it("fills in defaults for an empty environment", () => {
    const env = parseEnv({});
    expect(env.PORT).toBe(3000);
    expect(env.HOST).toBe("127.0.0.1");
    expect(env.CONDUIT_DATA_DIR).toBe("./data");
    expect(env.CONDUIT_DEMO_MODEL).toBe(false);
    expect(env.ANTHROPIC_API_KEY).toBeUndefined();
  });

  it("treats an empty API key as unset (the demo model then runs)", () => {
    expect(parseEnv({ ANTHROPIC_API_KEY: "" }).ANTHROPIC_API_KEY).toBeUndefined();
    expect(parseEnv({ ANTHROPIC_API_KEY: "sk-x" }).ANTHROPIC_API_KEY).toBe("sk-x");
  });

  it("coerces numbers and flags", () => {
    const env = parseEnv({ PORT: "8080", CONDUIT_DEMO_MODEL: "1" });
    expect(env.PORT).toBe(8080);
    expect(env.CONDUIT_DEMO_MODEL).toBe(true);
  });

  it("names every bad variable in one message", () => {
    let message = "";
    try {
      parseEnv({ PORT: "99999", DATABASE_URL: "mysql://x", NEXTAUTH_SECRET: "short", ANTHROPIC_BASE_URL: "not a url" });
    } catch (err) {
      expect(err).toBeInstanceOf(EnvError);
      message = (err as Error).message;
    }
    expect(message).toContain("PORT");
    expect(message).toContain("DATABASE_URL: must start with file: (SQLite) or postgres:// (PostgreSQL)");
    expect(message).toContain("NEXTAUTH_SECRET: must be at least 32 characters");
    expect(message).toContain("ANTHROPIC_BASE_URL");
  });

  it("accepts SQLite and PostgreSQL URLs", () => {
    expect(parseEnv({ DATABASE_URL: "file:./data/x.db" }).DATABASE_URL).toBe("file:./data/x.db");
    expect(parseEnv({ DATABASE_URL: "postgresql://u:p@localhost/db" }).DATABASE_URL).toMatch(/^postgresql/);
  });

  it("requires both halves of the OAuth configuration", () => {
    expect(() => parseEnv({ GITHUB_ID: "id" })).toThrow(/GITHUB_ID and GITHUB_SECRET/);
    expect(parseEnv({ GITHUB_ID: "id", GITHUB_SECRET: "s" }).GITHUB_ID).toBe("id");
  });
});

describe("REDIS_URL", () => {
  it("takes a redis:// or rediss:// URL with a password, alone or with an ACL user", () => {
    expect(parseEnv({ REDIS_URL: "redis://conduit:pw@10.0.0.5:6379" }).REDIS_URL).toBe("redis://conduit:pw@10.0.0.5:6379");
    expect(parseEnv({ REDIS_URL: "redis://:pw@10.0.0.5:6379/2" }).REDIS_URL).toBe("redis://:pw@10.0.0.5:6379/2");
    expect(parseEnv({ REDIS_URL: "rediss://conduit:pw@redis.internal:6380" }).REDIS_URL).toBe("rediss://conduit:pw@redis.internal:6380");
  });

  it("refuses one without a password, naming the way out", () => {
    for (const url of ["redis://10.0.0.5:6379", "redis://conduit@10.0.0.5:6379", "rediss://redis.internal:6380"]) {
      expect(() => parseEnv({ REDIS_URL: url })).toThrow(EnvError);
      expect(() => parseEnv({ REDIS_URL: url })).toThrow(/REDIS_URL has no password.*CONDUIT_REDIS_TRUSTED_NETWORK=yes-i-understand/s);
    }
  });

  it("takes one without a password when CONDUIT_REDIS_TRUSTED_NETWORK says so in so many words", () => {
    const env = parseEnv({ REDIS_URL: "redis://10.0.0.5:6379", CONDUIT_REDIS_TRUSTED_NETWORK: "yes-i-understand" });
    expect(env.REDIS_URL).toBe("redis://10.0.0.5:6379");
    for (const value of ["1", "true", "yes", "on"]) {
      expect(() => parseEnv({ REDIS_URL: "redis://10.0.0.5:6379", CONDUIT_REDIS_TRUSTED_NETWORK: value })).toThrow(
        /CONDUIT_REDIS_TRUSTED_NETWORK: must be yes-i-understand, or unset/,
      );
    }
  });

  it("refuses another scheme", () => {
    expect(() => parseEnv({ REDIS_URL: "http://:pw@10.0.0.5:6379" })).toThrow(/REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(() => parseEnv({ REDIS_URL: "10.0.0.5:6379" })).toThrow(/REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/);
  });
});
