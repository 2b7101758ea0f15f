import { describe, expect, it } from "vitest";
import { buildCliEnv } from "./build-cli-env";

const baseEnv = {
  PATH: "/usr/bin",
  HOME: "/home/conduit",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  TERM: "xterm-256color",
  ANTHROPIC_API_KEY: "sk-ant-x",
  ANTHROPIC_BASE_URL: "http://127.0.0.1:4100",
  CONDUIT_LEAK_TAG: "run-1",
  NEXTAUTH_SECRET: "do-not-leak",
  DATABASE_URL: "postgres://u:p@db/conduit",
  CLAUDE_CONFIG_DIR: "/root/.claude",
  NODE_OPTIONS: "--inspect",
  UNSET: undefined,
};

describe("buildCliEnv", () => {
  it("passes the allow-list, sets Conduit's own variables, and drops everything else", () => {
    expect(buildCliEnv({ baseEnv, configDir: "/data/cfg/ws" })).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/conduit",
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      TERM: "xterm-256color",
      ANTHROPIC_API_KEY: "sk-ant-x",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:4100",
      CONDUIT_LEAK_TAG: "run-1",
      CLAUDE_CONFIG_DIR: "/data/cfg/ws",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
    });
  });

  it("sets IS_SANDBOX only for root with bypass allowed", () => {
    expect(buildCliEnv({ baseEnv, configDir: "/c", allowBypass: true, isRoot: true }).IS_SANDBOX).toBe("1");
    expect(buildCliEnv({ baseEnv, configDir: "/c", allowBypass: true, isRoot: false }).IS_SANDBOX).toBeUndefined();
    expect(buildCliEnv({ baseEnv, configDir: "/c", allowBypass: false, isRoot: true }).IS_SANDBOX).toBeUndefined();
  });

  it("with the credential proxy, hands over its token and URL and none of the operator's credential variables", () => {
    const credentials = { ANTHROPIC_API_KEY: "sk-ant-conduit-token", ANTHROPIC_BASE_URL: "http://127.0.0.1:4999" };
    const env = buildCliEnv({
      baseEnv,
      configDir: "/c",
      credentials,
      // Even a test's explicit extras cannot put the operator's credential back.
      extraEnv: { ANTHROPIC_AUTH_TOKEN: "sk-ant-oat-operator", CLAUDE_CODE_OAUTH_TOKEN: "oauth" },
    });
    expect(env).toMatchObject(credentials);
    expect(env.ANTHROPIC_AUTH_TOKEN).toBeUndefined();
    expect(env.CLAUDE_CODE_OAUTH_TOKEN).toBeUndefined();
    expect(Object.values(env)).not.toContain("sk-ant-x");
  });

  it("adds explicit extras last", () => {
    const env = buildCliEnv({ baseEnv, configDir: "/c", extraEnv: { CLAUDE_CODE_MAX_RETRIES: "1" } });
    expect(env.CLAUDE_CODE_MAX_RETRIES).toBe("1");
  });
});
