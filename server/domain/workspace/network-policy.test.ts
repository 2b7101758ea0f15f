import { describe, expect, it } from "vitest";
import {
  describeNetworkPolicy,
  domainPatternProblem,
  hostAllowed,
  isIpLiteral,
  networkPolicyColumns,
  networkPolicyOf,
  ZNetworkPolicyInput,
} from "./network-policy";

describe("isIpLiteral", () => {
  it.each(["127.0.0.1", "10.0.0.1", "127.1", "2130706433", "0x7f.1", "0x7f000001", "::1", "[::1]", "fe80::1", "1.2.3.4."])("%s is an address", (host) => {
    expect(isIpLiteral(host)).toBe(true);
  });
  it.each(["localhost", "example.com", "1password.com", "a1.b2", "xn--bcher-kva.example"])("%s is a name", (host) => {
    expect(isIpLiteral(host)).toBe(false);
  });
});

describe("domainPatternProblem", () => {
  it.each(["registry.npmjs.org", "*.github.com", "localhost", "Example.COM", "example.com."])("accepts %s", (pattern) => {
    expect(domainPatternProblem(pattern)).toBeUndefined();
  });
  it.each<[string, RegExp]>([
    ["", /empty/],
    ["https://example.com/", /not a URL/],
    ["example.com:443", /port/],
    ["127.0.0.1", /IP address/],
    ["[::1]", /IP address/],
    ["*", /not a valid|too wide|IP|first label/],
    ["*.com", /too wide/],
    ["a.*.com", /first label/],
    ["-bad.com", /not a valid domain/],
    ["under_score.com", /not a valid domain/],
    [`${"a".repeat(64)}.com`, /not a valid domain/],
  ])("refuses %j", (pattern, why) => {
    expect(domainPatternProblem(pattern)).toMatch(why);
  });
});

describe("hostAllowed", () => {
  const list = ["registry.npmjs.org", "*.github.com", "localhost"];
  it.each<[string, boolean]>([
    ["registry.npmjs.org", true],
    ["REGISTRY.npmjs.org.", true],
    ["api.github.com", true],
    ["a.b.github.com", true],
    ["github.com", false], // `*.` means below, not the name itself
    ["evilgithub.com", false],
    ["github.com.evil.net", false],
    ["npmjs.org", false],
    ["localhost", true],
    ["127.0.0.1", false],
    ["2130706433", false],
    ["", false],
    ["exa mple.com", false],
  ])("%s → %s", (host, expected) => {
    expect(hostAllowed(host, list)).toBe(expected);
  });
  it("allows nothing under an empty list", () => {
    expect(hostAllowed("example.com", [])).toBe(false);
  });
});

describe("ZNetworkPolicyInput", () => {
  it("normalizes and de-duplicates an allow-list", () => {
    expect(ZNetworkPolicyInput.parse({ mode: "allowlist", domains: ["Example.com", " example.com ", "", "*.GitHub.com"] })).toEqual({
      mode: "allowlist",
      domains: ["example.com", "*.github.com"],
    });
  });
  it("drops domains for open and none", () => {
    expect(ZNetworkPolicyInput.parse({ mode: "none", domains: ["example.com"] })).toEqual({ mode: "none", domains: [] });
    expect(ZNetworkPolicyInput.parse({ mode: "open" })).toEqual({ mode: "open", domains: [] });
  });
  it("names the bad entry", () => {
    const result = ZNetworkPolicyInput.safeParse({ mode: "allowlist", domains: ["ok.com", "10.0.0.1"] });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["domains", 1]);
    expect(result.error?.issues[0]?.message).toMatch(/"10\.0\.0\.1" is an IP address/);
  });
  it("wants at least one domain in an allow-list", () => {
    expect(ZNetworkPolicyInput.safeParse({ mode: "allowlist", domains: [" "] }).error?.issues[0]?.message).toMatch(/at least one domain/);
  });
  it("refuses unknown modes and keys", () => {
    expect(ZNetworkPolicyInput.safeParse({ mode: "some" }).success).toBe(false);
    expect(ZNetworkPolicyInput.safeParse({ mode: "open", extra: 1 }).success).toBe(false);
  });
});

describe("stored columns", () => {
  it("round-trips", () => {
    const policy = { mode: "allowlist" as const, domains: ["a.com", "*.b.org"] };
    expect(networkPolicyOf(networkPolicyColumns(policy))).toEqual(policy);
    expect(networkPolicyOf(networkPolicyColumns({ mode: "none", domains: [] }))).toEqual({ mode: "none", domains: [] });
  });
  it("reads null as open and anything unknown as none (never open by accident)", () => {
    expect(networkPolicyOf({ networkPolicy: null, networkDomains: null }).mode).toBe("open");
    expect(networkPolicyOf({ networkPolicy: "garbage", networkDomains: "a.com" }).mode).toBe("none");
  });
  it("describes", () => {
    expect(describeNetworkPolicy({ mode: "allowlist", domains: ["a.com"] })).toBe("network: 1 domain");
    expect(describeNetworkPolicy({ mode: "none", domains: [] })).toBe("network: none");
  });
});
