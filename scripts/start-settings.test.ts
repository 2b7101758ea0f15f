import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EnvError, ZEnv, parseEnv } from "../server/env/env";
import { DEMO_API_KEY, childEnvironment, portsToBind, resolveStartSettings, withDotEnv } from "./start-settings";

const root = path.resolve(import.meta.dirname, "..");
const secret = "s".repeat(43);

/** Variables only `npm start` sets (never by hand), so the README's table leaves them out. */
const INTERNAL = new Set(["NODE_ENV", "CONDUIT_DEMO_MODEL"]);

/** The variable names in the README's configuration table. */
function readmeVariables(): string[] {
  const readme = readFileSync(path.join(root, "README.md"), "utf8");
  const table = readme.slice(readme.indexOf("## Configuration"));
  return [...table.matchAll(/^\| ((?:`[A-Z_]+`(?:, )?)+) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([A-Z_]+)`/g)].map((n) => n[1]!));
}

/** A valid value for every variable of the README's table, different from its default. */
const SAMPLES: Record<string, string> = {
  PORT: "4310",
  HOST: "0.0.0.0",
  CONDUIT_PUBLIC_URL: "https://conduit.example.test",
  CONDUIT_NEXT_PORT: "4311",
  CONDUIT_SIDECAR_PORT: "4312",
  CONDUIT_MODEL_PORT: "4313",
  CONDUIT_NEXT_HOST: "0.0.0.0",
  CONDUIT_SIDECAR_HOST: "0.0.0.0",
  CONDUIT_WEB_UPSTREAM: "http://10.0.0.2:3101",
  CONDUIT_SIDECAR_UPSTREAMS: "http://10.0.0.3:3102,http://10.0.0.4:3102",
  CONDUIT_EDGE_RUNTIME: "deno",
  CONDUIT_DATA_DIR: "/srv/conduit-data",
  CONDUIT_WORKSPACES_ROOT: "/srv/conduit-workspaces",
  DATABASE_URL: "postgresql://conduit:pw@127.0.0.1:5432/conduit",
  NEXTAUTH_SECRET: "n".repeat(40),
  NEXTAUTH_URL: "https://auth.example.test",
  GITHUB_ID: "gh-id",
  GITHUB_SECRET: "gh-secret",
  ANTHROPIC_API_KEY: "sk-ant-test",
  ANTHROPIC_BASE_URL: "https://gateway.example.test",
  CLAUDE_CLI_PATH: "/opt/claude/bin/claude",
  CONDUIT_SESSION_MAX: "7",
  CONDUIT_PROXY_MAX_CONCURRENT: "2",
  CONDUIT_PROXY_MAX_PER_MINUTE: "60",
  CONDUIT_SESSION_MAX_PER_USER: "3",
  CONDUIT_SESSION_MAX_PER_WORKSPACE: "4",
  CONDUIT_SESSION_EVENTS_MAX: "50000",
  CONDUIT_SESSION_FILE_MB: "2048",
  CONDUIT_MIN_FREE_MB: "100",
  CONDUIT_IDLE_CULL_SEC: "60",
  CONDUIT_STALL_SEC: "30",
  CONDUIT_EDGE_RATE_LIMIT: "off",
  CONDUIT_TRUST_PROXY: "on",
  CONDUIT_SIGNUP: "open",
  CONDUIT_SANDBOX: "off",
  CONDUIT_METRICS_TOKEN: "m".repeat(24),
  CONDUIT_LATENCY_TRACE: "true",
  REDIS_URL: "redis://conduit:pw@127.0.0.1:6379",
  CONDUIT_REDIS_TRUSTED_NETWORK: "yes-i-understand",
  CONDUIT_SIDECAR_ID: "sidecar-b",
  CONDUIT_SESSION_MEMORY_MB: "1024",
  CONDUIT_SESSION_PIDS_MAX: "256",
  LOG_LEVEL: "debug",
};

function childFor(source: Record<string, string>): NodeJS.ProcessEnv {
  const settings = resolveStartSettings(parseEnv(source), root);
  return childEnvironment(settings, { inherited: { PATH: "/usr/bin", HOME: "/home/x" }, secret, dev: false });
}

describe("the README's configuration table", () => {
  it("names every variable of the schema, and only those", () => {
    const documented = readmeVariables();
    const schema = Object.keys(ZEnv.shape).filter((k) => !INTERNAL.has(k));
    expect([...documented].sort()).toEqual([...schema].sort());
  });

  it("has a sample value for each variable in this test", () => {
    expect(Object.keys(SAMPLES).sort()).toEqual(readmeVariables().sort());
  });
});

describe("npm start's settings for its parts", () => {
  it("are complete with no variable set at all", () => {
    const child = childFor({});
    const env = parseEnv(child);
    expect(env.PORT).toBe(3000);
    expect(env.CONDUIT_NEXT_PORT).toBe(3101);
    expect(env.CONDUIT_SIDECAR_PORT).toBe(3102);
    expect(env.CONDUIT_MODEL_PORT).toBe(3103);
    expect(env.CONDUIT_PUBLIC_URL).toBe("http://127.0.0.1:3000");
    expect(env.NEXTAUTH_URL).toBe("http://127.0.0.1:3000");
    expect(env.NEXTAUTH_SECRET).toBe(secret);
    expect(env.CONDUIT_DATA_DIR).toBe(path.join(root, "data"));
    expect(env.CONDUIT_WORKSPACES_ROOT).toBe(path.join(root, "data", "workspaces"));
    expect(env.DATABASE_URL).toBe(`file:${path.join(root, "data", "conduit.db")}`);
    expect(env.CONDUIT_DEMO_MODEL).toBe(true);
    expect(env.ANTHROPIC_API_KEY).toBe(DEMO_API_KEY);
    expect(env.ANTHROPIC_BASE_URL).toBe("http://127.0.0.1:3103");
    expect(env.CONDUIT_SIGNUP).toBe("invite");
    expect(child.PATH).toBe("/usr/bin");
  });

  it.each(Object.entries(SAMPLES))("work with only %s set", (name, value) => {
    // the GitHub pair is one setting: both or neither (one half alone is refused, tested below)
    const github = name === "GITHUB_ID" || name === "GITHUB_SECRET";
    const child = childFor(github ? { GITHUB_ID: SAMPLES.GITHUB_ID!, GITHUB_SECRET: SAMPLES.GITHUB_SECRET! } : { [name]: value });
    // every part parses the record it is given with the same schema: nothing missing or invalid
    const env = parseEnv(child);
    for (const key of ["PORT", "CONDUIT_NEXT_PORT", "CONDUIT_SIDECAR_PORT", "CONDUIT_MODEL_PORT", "NEXTAUTH_SECRET", "CONDUIT_PUBLIC_URL", "DATABASE_URL"] as const) {
      expect(env[key], key).toBeDefined();
    }
    const expected: Record<string, unknown> = {
      CONDUIT_PUBLIC_URL: value,
      PORT: Number(value),
      CONDUIT_NEXT_PORT: Number(value),
      CONDUIT_SIDECAR_PORT: Number(value),
      CONDUIT_SESSION_MAX: Number(value),
      CONDUIT_MIN_FREE_MB: Number(value),
      CONDUIT_IDLE_CULL_SEC: Number(value),
      CONDUIT_STALL_SEC: Number(value),
    };
    if (name === "CONDUIT_MODEL_PORT") expect(env.ANTHROPIC_BASE_URL).toBe(`http://127.0.0.1:${value}`);
    else if (name === "ANTHROPIC_API_KEY") {
      expect(env.ANTHROPIC_API_KEY).toBe(value);
      expect(env.CONDUIT_DEMO_MODEL).toBe(false);
    } else if (name === "ANTHROPIC_BASE_URL") {
      // with no key the demo model still runs, and the CLI is pointed at it
      expect(env.ANTHROPIC_BASE_URL).toBe("http://127.0.0.1:3103");
    } else if (name === "HOST") expect(env.CONDUIT_PUBLIC_URL).toBe("http://127.0.0.1:3000");
    else if (name === "CONDUIT_DATA_DIR") expect(env.DATABASE_URL).toBe(`file:${path.join(value, "conduit.db")}`);
    else if (name === "PORT") expect(env.CONDUIT_PUBLIC_URL).toBe(`http://127.0.0.1:${value}`);
    else expect(String(env[name as keyof typeof env])).toBe(String(expected[name] ?? value).replace(/\/$/, ""));
  });

  it("refuse one half of the GitHub pair, naming both", () => {
    expect(() => parseEnv({ GITHUB_ID: "x" })).toThrow(/GITHUB_ID and GITHUB_SECRET/);
  });

  it("name a bad value", () => {
    expect(() => parseEnv({ CONDUIT_SIDECAR_PORT: "http" })).toThrow(EnvError);
    expect(() => parseEnv({ CONDUIT_SIDECAR_PORT: "http" })).toThrow(/CONDUIT_SIDECAR_PORT/);
    expect(() => parseEnv({ CONDUIT_SIGNUP: "everyone" })).toThrow(/CONDUIT_SIGNUP/);
  });

  it("bind the demo model's port only when it runs", () => {
    const names = (source: Record<string, string>) => portsToBind(resolveStartSettings(parseEnv(source), root)).map((p) => p.variable);
    expect(names({})).toEqual(["PORT", "CONDUIT_NEXT_PORT", "CONDUIT_SIDECAR_PORT", "CONDUIT_MODEL_PORT"]);
    expect(names({ ANTHROPIC_API_KEY: "sk" })).toEqual(["PORT", "CONDUIT_NEXT_PORT", "CONDUIT_SIDECAR_PORT"]);
  });
});

describe("withDotEnv", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("reads .env under the environment, which wins", () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "conduit-dotenv-"));
    writeFileSync(path.join(dir, ".env"), "PORT=4400\nCONDUIT_SIGNUP=open\n# a comment\nLOG_LEVEL=warn\n");
    const merged = withDotEnv(dir, { PORT: "4500" });
    expect(merged.PORT).toBe("4500");
    expect(merged.CONDUIT_SIGNUP).toBe("open");
    expect(parseEnv(merged).LOG_LEVEL).toBe("warn");
  });

  it("is the environment alone without a .env file", () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "conduit-dotenv-"));
    expect(withDotEnv(dir, { PORT: "1" })).toEqual({ PORT: "1" });
  });
});
