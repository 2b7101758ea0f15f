/**
 * A workspace's network policy: what the tools of its sessions (Bash, WebFetch, package
 * installs) may reach. Owners set it; it applies to CLI processes started after the change.
 * - `open`: the host's network, as without a policy (the default);
 * - `none`: no network at all (the sandbox has a private loopback; only the model's API gets
 *   through, by Conduit's credential proxy);
 * - `allowlist`: only the listed domains, through Conduit's filtering proxy (HTTP and HTTPS).
 *
 * Pure rules: the domain syntax, the matcher the sidecar's filtering proxy applies, and the
 * parsing of the stored columns. IP literals are never allowed: a list names domains, and an
 * address would sidestep it (`127.1`, `2130706433` and `0x7f.1` are all 127.0.0.1 to a resolver).
 */
import { z } from "zod";

export const NetworkPolicyMode = { open: "open", none: "none", allowlist: "allowlist" } as const;
export type NetworkPolicyMode = (typeof NetworkPolicyMode)[keyof typeof NetworkPolicyMode];

/** The policy of one workspace. */
export interface NetworkPolicy {
  mode: NetworkPolicyMode;
  /** Allowed domain patterns (only meaningful for `allowlist`), normalized. */
  domains: string[];
}

/** The default: today's behaviour. */
export const openNetwork: NetworkPolicy = { mode: "open", domains: [] };

/** At most this many patterns in one list. */
export const maxAllowedDomains = 100;

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * True for a host a resolver would take as an address rather than a name: IPv6 (any `:` or
 * brackets), and any name whose last label is numeric or hex (`10.0.0.1`, `127.1`, `2130706433`,
 * `0x7f.1`); no real top-level domain is numeric.
 */
export function isIpLiteral(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/\.$/, "");
  if (h.includes(":") || h.startsWith("[")) return true;
  const last = h.split(".").pop() ?? "";
  return /^\d+$/.test(last) || /^0x[0-9a-f]*$/.test(last);
}

/** Why `pattern` is not a valid allow-list entry, or undefined when it is. */
export function domainPatternProblem(pattern: string): string | undefined {
  const p = pattern.trim().toLowerCase();
  if (p === "") return "is empty";
  if (p.length > 253) return "is longer than 253 characters";
  if (p.includes("://") || p.includes("/")) return "must be a domain name, not a URL (write `example.com`, not `https://example.com/`)";
  if (p.includes(":") && !p.startsWith("[")) return "must not name a port (every port of an allowed domain is allowed)";
  if (isIpLiteral(p)) return "is an IP address; only domain names can be allowed";
  const name = p.startsWith("*.") ? p.slice(2) : p;
  if (name.includes("*")) return "may use `*` only as its whole first label (`*.example.com`)";
  const labels = name.replace(/\.$/, "").split(".");
  if (labels.some((label) => !LABEL.test(label))) return "is not a valid domain name (letters, digits and `-` in dot-separated labels)";
  if (p.startsWith("*.") && labels.length < 2) return "is too wide: `*.` needs at least two labels after it (`*.example.com`)";
  return undefined;
}

/** A pattern as stored and compared: lower case, no trailing dot, no spaces. */
export function normalizeDomainPattern(pattern: string): string {
  return pattern.trim().toLowerCase().replace(/\.$/, "");
}

/**
 * True when `host` may be reached under `patterns`: an exact match, or `*.example.com` for any
 * name below `example.com` (not `example.com` itself: list both when both are meant).
 * IP literals never match.
 */
export function hostAllowed(host: string, patterns: readonly string[]): boolean {
  const h = host.trim().toLowerCase().replace(/\.$/, "");
  if (h === "" || isIpLiteral(h) || domainPatternProblem(h) !== undefined) return false;
  return patterns.some((pattern) => {
    const p = normalizeDomainPattern(pattern);
    if (p.startsWith("*.")) return h.endsWith(p.slice(1)) && h.length > p.length - 1;
    return h === p;
  });
}

/** What an owner sends to change the policy. */
export const ZNetworkPolicyInput = z
  .object({
    mode: z.enum(["open", "none", "allowlist"]),
    domains: z.array(z.string().max(300)).max(maxAllowedDomains, `At most ${maxAllowedDomains} domains can be listed.`).default([]),
  })
  .strict()
  .superRefine((input, ctx) => {
    input.domains.forEach((domain, index) => {
      if (domain.trim() === "") return; // blank lines of the textarea
      const problem = domainPatternProblem(domain);
      if (problem !== undefined) ctx.addIssue({ code: "custom", path: ["domains", index], message: `"${domain.trim()}" ${problem}.` });
    });
    if (input.mode === "allowlist" && input.domains.every((d) => d.trim() === "")) {
      ctx.addIssue({ code: "custom", path: ["domains"], message: "An allow-list needs at least one domain (or choose “none”)." });
    }
  })
  .transform((input): NetworkPolicy => ({
    mode: input.mode,
    domains: input.mode === "allowlist" ? [...new Set(input.domains.filter((d) => d.trim() !== "").map(normalizeDomainPattern))] : [],
  }));
export type NetworkPolicyInput = z.input<typeof ZNetworkPolicyInput>;

/** The policy stored in a workspace's columns (`networkPolicy`, `networkDomains`); anything unknown reads as `none`, never as open. */
export function networkPolicyOf(columns: { networkPolicy: string | null; networkDomains: string | null }): NetworkPolicy {
  if (columns.networkPolicy === null || columns.networkPolicy === "open") return openNetwork;
  const domains = (columns.networkDomains ?? "")
    .split("\n")
    .map(normalizeDomainPattern)
    .filter((d) => d !== "" && domainPatternProblem(d) === undefined);
  if (columns.networkPolicy === "allowlist") return { mode: "allowlist", domains };
  return { mode: "none", domains: [] };
}

/** The columns that store `policy`. */
export function networkPolicyColumns(policy: NetworkPolicy): { networkPolicy: string; networkDomains: string } {
  return { networkPolicy: policy.mode, networkDomains: policy.mode === "allowlist" ? policy.domains.join("\n") : "" };
}

/** A short label for headers and lists. */
export function describeNetworkPolicy(policy: NetworkPolicy): string {
  if (policy.mode === "open") return "network: open";
  if (policy.mode === "none") return "network: none";
  return `network: ${policy.domains.length} domain${policy.domains.length === 1 ? "" : "s"}`;
}
