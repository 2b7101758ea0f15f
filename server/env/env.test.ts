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
