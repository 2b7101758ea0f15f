/**
 * Configuration, parsed once per process with zod. Every variable is listed here and in
 * `.env.example`; a bad value stops the process at start with a message naming the variable.
 * `scripts/start.ts` fills in defaults (ports, a generated secret) before it starts the parts,
 * so the web, sidecar and edge processes always receive complete, explicit settings.
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

/** Every variable Conduit reads, with its default. */
export const ZEnv = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("production"),
  PORT: port.default(3000),
  HOST: z.string().default("127.0.0.1"),
  CONDUIT_PUBLIC_URL: z.url().optional(),
  CONDUIT_NEXT_PORT: port.default(3101),
  CONDUIT_SIDECAR_PORT: port.default(3102),
  CONDUIT_MODEL_PORT: port.default(3103),
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
  REDIS_URL: optionalText,
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  CONDUIT_SESSION_MAX: z.coerce.number().int().min(1).default(20),
  CONDUIT_MIN_FREE_MB: z.coerce.number().int().min(0).default(400),
  CONDUIT_IDLE_CULL_SEC: z.coerce.number().int().min(0).default(1800),
  CONDUIT_STALL_SEC: z.coerce.number().int().min(1).default(120),
  CONDUIT_EDGE_RATE_LIMIT: z.enum(["on", "off"]).default("on"),
  CONDUIT_TRUST_PROXY: z.enum(["on", "off"]).default("off"),
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
  return env;
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
