/**
 * Configuration: one zod schema with one set of defaults for every process (edge, web, sidecar,
 * model server, `npm start`). Every variable is listed here and in `.env.example`; a bad value
 * stops the process at start with a message naming the variable.
 *
 * `parseEnv` is a pure function over a record, and nothing here touches `process` at module
 * scope, so the edge's Deno entry imports it unchanged. `scripts/start.ts` adds what only it can
 * make (a generated secret, absolute paths) and hands every part the same complete record.
 */
import { z } from "zod";

const port = z.coerce.number().int().min(1).max(65535);
const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v));
const flag = z
  .enum(["0", "1", "true", "false", ""])
  .optional()
  .transform((v) => v === "1" || v === "true");

function splitUpstreams(list: string): string[] {
  return list
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

function isRedisUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "redis:" || url.protocol === "rediss:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** Whether a Redis URL carries a password (alone, or with an ACL user name). */
export function redisUrlHasPassword(value: string): boolean {
  try {
    return new URL(value).password !== "";
  } catch {
    return false;
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && (url.pathname === "/" || url.pathname === "");
  } catch {
    return false;
  }
}

/** Every variable Conduit reads, with its default. */
export const ZEnv = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("production"),
  PORT: port.default(3000),
  HOST: z.string().default("127.0.0.1"),
  CONDUIT_PUBLIC_URL: z.url().optional(),
  CONDUIT_NEXT_PORT: port.default(3101),
  CONDUIT_SIDECAR_PORT: port.default(3102),
  CONDUIT_MODEL_PORT: port.default(3103),
  /** Interface the web app binds (`0.0.0.0` when the edge runs on another machine). */
  CONDUIT_NEXT_HOST: z.string().default("127.0.0.1"),
  /** Interface the sidecar binds (`0.0.0.0` when the edge runs on another machine). */
  CONDUIT_SIDECAR_HOST: z.string().default("127.0.0.1"),
  /**
   * This sidecar's id in the cluster (leases, adoption); unset: generated once into
   * `DATA_DIR/sidecar-id`. Sidecars that share a data directory must each set their own.
   */
  CONDUIT_SIDECAR_ID: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, "must be 1-63 letters, digits, dots, dashes or underscores")
    .optional(),
  /** Where the edge finds the web app; default `http://127.0.0.1:CONDUIT_NEXT_PORT`. */
  CONDUIT_WEB_UPSTREAM: z.url({ protocol: /^https?$/ }).optional(),
  /** Where the edge finds the sidecars, comma-separated; default `http://127.0.0.1:CONDUIT_SIDECAR_PORT`. */
  CONDUIT_SIDECAR_UPSTREAMS: z
    .string()
    .optional()
    .refine((v) => v === undefined || splitUpstreams(v).every(isHttpUrl), "must be a comma-separated list of http:// or https:// URLs"),
  /** Which runtime `npm start` runs the edge under: `node`, or `deno` (the same handler). */
  CONDUIT_EDGE_RUNTIME: z.enum(["node", "deno"]).default("node"),
  CONDUIT_DATA_DIR: z.string().default("./data"),
  CONDUIT_WORKSPACES_ROOT: z.string().optional(),
  DATABASE_URL: z
    .string()
    .regex(/^(file:|postgres(ql)?:\/\/)/, "must start with file: (SQLite) or postgres:// (PostgreSQL)")
    .optional(),
  NEXTAUTH_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  NEXTAUTH_URL: z.url().optional(),
  GITHUB_ID: optionalText,
  GITHUB_SECRET: optionalText,
  ANTHROPIC_API_KEY: optionalText,
  ANTHROPIC_BASE_URL: z.url().optional(),
  CLAUDE_CLI_PATH: optionalText,
  CONDUIT_DEMO_MODEL: flag,
  /**
   * Sidecars of a cluster share Redis (`redis://` or `rediss://` for TLS). It must carry a
   * password (`redis://:password@host` or an ACL user, `redis://user:password@host`) unless
   * CONDUIT_REDIS_TRUSTED_NETWORK says otherwise (checked in `parseEnv`).
   */
  REDIS_URL: optionalText.refine((v) => v === undefined || isRedisUrl(v), "must be a redis:// or rediss:// URL (redis://user:password@host:6379)"),
  /** `yes-i-understand`: a REDIS_URL without a password is accepted (only a network nothing untrusted reaches). */
  CONDUIT_REDIS_TRUSTED_NETWORK: z.enum(["yes-i-understand"], { message: "must be yes-i-understand, or unset" }).optional(),
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  CONDUIT_SESSION_MAX: z.coerce.number().int().min(1).default(20),
  /** Live CLIs of the sessions one person created (their own idle ones give way first). */
  CONDUIT_SESSION_MAX_PER_USER: z.coerce.number().int().min(1).default(5),
  /** Live CLIs of one workspace's sessions. */
  CONDUIT_SESSION_MAX_PER_WORKSPACE: z.coerce.number().int().min(1).default(10),
  /** Events one session's log may hold; past it, new prompts are refused (start a new session). */
  CONDUIT_SESSION_EVENTS_MAX: z.coerce.number().int().min(1000).default(200_000),
  CONDUIT_MIN_FREE_MB: z.coerce.number().int().min(0).default(400),
  CONDUIT_IDLE_CULL_SEC: z.coerce.number().int().min(0).default(1800),
  CONDUIT_STALL_SEC: z.coerce.number().int().min(1).default(120),
  CONDUIT_EDGE_RATE_LIMIT: z.enum(["on", "off"]).default("on"),
  CONDUIT_TRUST_PROXY: z.enum(["on", "off"]).default("off"),
  /** Who may create an account once the first (admin) account exists. */
  CONDUIT_SIGNUP: z.enum(["invite", "open", "closed"]).default("invite"),
  /** How CLI children are isolated: bubblewrap when installed (auto), always (bwrap), never (off). */
  CONDUIT_SANDBOX: z.enum(["auto", "bwrap", "off"]).default("auto"),
  /** Memory cap of each session's CLI and everything it starts, in MB (a cgroup; 0: no cap). */
  CONDUIT_SESSION_MEMORY_MB: z.coerce.number().int().min(0).default(2048),
  /** Process cap of each session's CLI and everything it starts (a cgroup; 0: no cap). */
  CONDUIT_SESSION_PIDS_MAX: z.coerce.number().int().min(0).default(512),
  /** Largest file a session's process may write, in MB (RLIMIT_FSIZE; the rlimit fallback only; 0: no cap). */
  CONDUIT_SESSION_FILE_MB: z.coerce.number().int().min(0).default(8192),
  /** Model calls one session may have in flight through the credential proxy (429 beyond; 0: no cap). */
  CONDUIT_PROXY_MAX_CONCURRENT: z.coerce.number().int().min(0).max(1000).default(4),
  /** Model calls one session may start per minute through the credential proxy (429 beyond; 0: no cap). */
  CONDUIT_PROXY_MAX_PER_MINUTE: z.coerce.number().int().min(0).max(100_000).default(120),
  /** Lets `/metrics` be scraped with `Authorization: Bearer <token>` (else loopback only). */
  CONDUIT_METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  /** The sidecar prints a `conduit-latency` line per turn and approval stage on stderr (bench/browser-turn). */
  CONDUIT_LATENCY_TRACE: flag,
});

export type Env = z.infer<typeof ZEnv>;

/** Thrown when the environment is invalid; its message lists every bad variable. */
export class EnvError extends Error {
  override readonly name = "EnvError";
}

/** Parses an environment record; throws {@link EnvError} naming each invalid variable. */
export function parseEnv(source: Record<string, string | undefined>): Env {
  // an empty variable means "not set", as in most shells' VAR= usage
  const present = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ""));
  const result = ZEnv.safeParse(present);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new EnvError(`Invalid configuration:\n${lines.join("\n")}\nSee .env.example for every setting.`);
  }
  const env = result.data;
  if ((env.GITHUB_ID === undefined) !== (env.GITHUB_SECRET === undefined)) {
    throw new EnvError("Invalid configuration:\n  GITHUB_ID and GITHUB_SECRET must be set together.");
  }
  if (env.REDIS_URL !== undefined && !redisUrlHasPassword(env.REDIS_URL) && env.CONDUIT_REDIS_TRUSTED_NETWORK === undefined) {
    throw new EnvError(
      "Invalid configuration:\n  REDIS_URL has no password: anything that reaches this Redis could read the cluster's traffic and" +
        " disrupt it. Give Redis a password (requirepass, or an ACL user) and put it in the URL" +
        " (redis://user:password@host:6379, or rediss:// for TLS), or set CONDUIT_REDIS_TRUSTED_NETWORK=yes-i-understand" +
        " if only trusted machines can reach it (docs/DEPLOY.md).",
    );
  }
  return env;
}

/**
 * The URL people open: `CONDUIT_PUBLIC_URL`, else `http://HOST:PORT` (a wildcard bind is named
 * by its loopback address, the one a browser on this machine can open).
 */
export function publicUrlOf(env: Pick<Env, "CONDUIT_PUBLIC_URL" | "HOST" | "PORT">): string {
  if (env.CONDUIT_PUBLIC_URL !== undefined) return env.CONDUIT_PUBLIC_URL.replace(/\/+$/, "");
  const host = env.HOST === "0.0.0.0" || env.HOST === "::" ? "127.0.0.1" : env.HOST.includes(":") ? `[${env.HOST}]` : env.HOST;
  return `http://${host}:${env.PORT}`;
}

/** The web app's origin as the edge reaches it. */
export function webUpstreamOf(env: Pick<Env, "CONDUIT_WEB_UPSTREAM" | "CONDUIT_NEXT_PORT">): string {
  return new URL(env.CONDUIT_WEB_UPSTREAM ?? `http://127.0.0.1:${env.CONDUIT_NEXT_PORT}`).origin;
}

/** The sidecars' origins as the edge reaches them (duplicates dropped), in the configured order. */
export function sidecarUpstreamsOf(env: Pick<Env, "CONDUIT_SIDECAR_UPSTREAMS" | "CONDUIT_SIDECAR_PORT">): string[] {
  const list = env.CONDUIT_SIDECAR_UPSTREAMS === undefined ? [] : splitUpstreams(env.CONDUIT_SIDECAR_UPSTREAMS);
  const origins = list.map((item) => new URL(item).origin);
  return origins.length > 0 ? [...new Set(origins)] : [`http://127.0.0.1:${env.CONDUIT_SIDECAR_PORT}`];
}

/** The public origin, plus its localhost/127.0.0.1 twin: both name this machine's port. */
export function publicOriginsOf(publicUrl: string): string[] {
  const url = new URL(publicUrl);
  const origins = [url.origin];
  if (url.hostname === "127.0.0.1") origins.push(url.origin.replace("127.0.0.1", "localhost"));
  if (url.hostname === "localhost") origins.push(url.origin.replace("localhost", "127.0.0.1"));
  return origins;
}

let cached: Env | undefined;

/** The current process's environment, parsed on first use. */
export function getEnv(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}

/** Settings a process needs to be complete (set by scripts/start.ts or by the operator). */
export function requireSetting<K extends keyof Env>(env: Env, key: K): NonNullable<Env[K]> {
  const value = env[key];
  if (value === undefined || value === null) {
    throw new EnvError(`Invalid configuration:\n  ${String(key)} is required (start Conduit with npm start).`);
  }
  return value as NonNullable<Env[K]>;
}
