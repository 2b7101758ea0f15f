/**
 * What `npm start` hands its parts: the one parsed configuration (server/env) with the values
 * only the starter can decide (absolute paths, the generated secret, the demo model's URL)
 * filled in, written out as a complete environment record. Every part parses the same schema
 * again, so the record it receives is explicit and nothing depends on a part's own defaults.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv as parseDotEnv } from "node:util";
import { ZEnv, publicUrlOf, type Env } from "../server/env/env";
import type { PartName } from "./start-parts";

/** An environment as a plain record (what `process.env` holds). */
export type EnvRecord = Record<string, string | undefined>;

/** The API key the CLI is given for the offline demo model (the model server accepts any). */
export const DEMO_API_KEY = "conduit-offline-demo";

export interface StartSettings {
  env: Env;
  dataDir: string;
  workspacesRoot: string;
  databaseUrl: string;
  publicUrl: string;
  /** No ANTHROPIC_API_KEY: the scripted offline demo model runs. */
  demo: boolean;
}

/** The environment with `root/.env` under it: a variable already set wins over the file. */
export function withDotEnv(root: string, environment: EnvRecord): EnvRecord {
  const file = path.join(root, ".env");
  if (!existsSync(file)) return { ...environment };
  return { ...parseDotEnv(readFileSync(file, "utf8")), ...environment };
}

/** Resolves paths against `root` and fills in what the parts derive from other settings. */
export function resolveStartSettings(env: Env, root: string): StartSettings {
  const dataDir = path.resolve(root, env.CONDUIT_DATA_DIR);
  return {
    env,
    dataDir,
    workspacesRoot: path.resolve(root, env.CONDUIT_WORKSPACES_ROOT ?? path.join(dataDir, "workspaces")),
    databaseUrl: env.DATABASE_URL ?? `file:${path.join(dataDir, "conduit.db")}`,
    publicUrl: publicUrlOf(env),
    demo: env.ANTHROPIC_API_KEY === undefined,
  };
}

/**
 * The environment every part is started with: the caller's variables (PATH, HOME, and anything
 * a part passes on to the CLI), then every setting of the schema written out explicitly.
 */
export function childEnvironment(
  settings: StartSettings,
  options: { inherited: EnvRecord; secret: string; dev: boolean },
): NodeJS.ProcessEnv {
  const { env } = settings;
  const explicit: Record<string, string> = {};
  for (const key of Object.keys(ZEnv.shape) as (keyof Env)[]) {
    const value = env[key];
    if (value !== undefined) explicit[key] = typeof value === "boolean" ? (value ? "1" : "0") : String(value);
  }
  const child: NodeJS.ProcessEnv = {
    ...options.inherited,
    ...explicit,
    NODE_ENV: options.dev ? "development" : "production",
    DATABASE_URL: settings.databaseUrl,
    CONDUIT_DATA_DIR: settings.dataDir,
    CONDUIT_WORKSPACES_ROOT: settings.workspacesRoot,
    CONDUIT_PUBLIC_URL: settings.publicUrl,
    NEXTAUTH_URL: env.NEXTAUTH_URL ?? settings.publicUrl,
    NEXTAUTH_SECRET: env.NEXTAUTH_SECRET ?? options.secret,
    CONDUIT_DEMO_MODEL: settings.demo ? "1" : "0",
  };
  if (settings.demo) {
    child.ANTHROPIC_BASE_URL = `http://127.0.0.1:${env.CONDUIT_MODEL_PORT}`;
    child.ANTHROPIC_API_KEY = DEMO_API_KEY;
  }
  return child;
}

/** The ports `npm start` binds, each with the variable that sets it (for "port in use" errors). */
export function portsToBind(
  settings: StartSettings,
  only?: ReadonlySet<PartName>,
): { name: string; variable: string; port: number; host: string }[] {
  const { env } = settings;
  const runs = (part: PartName) => only === undefined || only.has(part);
  const ports: { name: string; variable: string; port: number; host: string }[] = [];
  if (runs("edge")) ports.push({ name: "edge", variable: "PORT", port: env.PORT, host: env.HOST });
  if (runs("web")) ports.push({ name: "web", variable: "CONDUIT_NEXT_PORT", port: env.CONDUIT_NEXT_PORT, host: env.CONDUIT_NEXT_HOST });
  if (runs("sidecar")) {
    ports.push({ name: "sidecar", variable: "CONDUIT_SIDECAR_PORT", port: env.CONDUIT_SIDECAR_PORT, host: env.CONDUIT_SIDECAR_HOST });
    // the demo model goes with the sidecar: its CLI children are the model's only clients
    if (settings.demo) ports.push({ name: "model", variable: "CONDUIT_MODEL_PORT", port: env.CONDUIT_MODEL_PORT, host: "127.0.0.1" });
  }
  return ports;
}

/** The address to probe a part on: a wildcard bind answers on loopback. */
export function probeHost(host: string): string {
  return host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host;
}
