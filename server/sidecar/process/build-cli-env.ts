/**
 * The environment of a `claude` child: an allow-list, never the sidecar's whole environment
 * (which holds NEXTAUTH_SECRET, DATABASE_URL and the like; the CLI's Bash tool would hand them
 * to any command the model runs).
 */

/** Variables passed through from the base environment when present. */
export const passedThroughVariables: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TMPDIR",
  "TERM",
  "COLORTERM",
  "NO_COLOR",
  "FORCE_COLOR",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_BASE_URL",
  // Marks test-run processes so the leak check (test/leak-check.global.ts) finds survivors.
  "CONDUIT_LEAK_TAG",
];

/** Variables that carry the operator's credential or its gateway; with the proxy none of them reaches a child. */
export const operatorCredentialVariables: readonly string[] = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "ANTHROPIC_CUSTOM_HEADERS",
];

const LOCALE = /^LC_[A-Z_]+$/;

/** What the child's environment is made of. */
export interface CliEnvInput {
  /** Where the passed-through variables are read (the sidecar's `process.env`, or a test's env). */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** The per-workspace CLAUDE_CONFIG_DIR under Conduit's data directory. */
  configDir: string;
  /** The workspace allows bypassPermissions (`--allow-dangerously-skip-permissions`). */
  allowBypass?: boolean | undefined;
  /** The sidecar runs as root: the CLI refuses bypass as root unless IS_SANDBOX=1. */
  isRoot?: boolean | undefined;
  /**
   * The credential proxy's per-spawn key and URL. When given, they replace ANTHROPIC_API_KEY and
   * ANTHROPIC_BASE_URL of the base environment: the operator's credential never reaches the child.
   */
  credentials?: { ANTHROPIC_API_KEY: string; ANTHROPIC_BASE_URL: string } | undefined;
  /** Explicit additions (e.g. `CLAUDE_CODE_MAX_RETRIES` in tests); they win over everything above. */
  extraEnv?: Readonly<Record<string, string>> | undefined;
}

/** Builds the complete environment of a child. */
export function buildCliEnv(input: CliEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.baseEnv)) {
    if (value === undefined || value.includes("\0")) continue;
    if (passedThroughVariables.includes(name) || LOCALE.test(name)) env[name] = value;
  }
  env.CLAUDE_CONFIG_DIR = input.configDir;
  env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1";
  env.DISABLE_TELEMETRY = "1";
  env.DISABLE_AUTOUPDATER = "1";
  if (input.allowBypass === true && input.isRoot === true) env.IS_SANDBOX = "1";
  if (input.credentials === undefined) return { ...env, ...input.extraEnv };
  const withProxy: Record<string, string> = { ...env, ...input.extraEnv };
  for (const name of operatorCredentialVariables) delete withProxy[name];
  return { ...withProxy, ...input.credentials };
}

/** True when this process runs as root (the CLI's bypass check looks at the same thing). */
export function isRunningAsRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}
