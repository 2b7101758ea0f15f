/**
 * Which parts `npm start` runs, pure: `npm start -- --only edge|web|sidecar` (several comma
 * separated, or the flag repeated) runs those alone, so the parts can live on different
 * machines; without it all three run, as always. A lone part cannot take its neighbours'
 * settings from this machine's defaults, so what it needs from the others must be set:
 * checked here, before anything is started, with one message naming every missing variable.
 */
import type { Env } from "../server/env/env";

export const PART_NAMES = ["edge", "web", "sidecar"] as const;
export type PartName = (typeof PART_NAMES)[number];

export interface StartArgs {
  /** `--dev`: Next in development mode. */
  dev: boolean;
  /** The parts to run; undefined: every part (no `--only`). */
  only: ReadonlySet<PartName> | undefined;
}

/** A command line `npm start` cannot run; the message says what is accepted. */
export class StartArgsError extends Error {
  override readonly name = "StartArgsError";
}

const isPartName = (value: string): value is PartName => (PART_NAMES as readonly string[]).includes(value);

/** Parses `npm start`'s own arguments (those after `--`). */
export function parseStartArgs(argv: readonly string[]): StartArgs {
  let dev = false;
  let only: Set<PartName> | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--dev") {
      dev = true;
      continue;
    }
    if (arg === "--only" || arg.startsWith("--only=")) {
      const value = arg === "--only" ? argv[++i] : arg.slice("--only=".length);
      if (value === undefined || value.startsWith("--") || value.trim() === "") {
        throw new StartArgsError(`--only needs one or more parts: ${PART_NAMES.join(", ")} (comma separated)`);
      }
      only ??= new Set();
      for (const name of value.split(",").map((n) => n.trim())) {
        if (!isPartName(name)) throw new StartArgsError(`--only: unknown part "${name}"; the parts are ${PART_NAMES.join(", ")}`);
        only.add(name);
      }
      continue;
    }
    throw new StartArgsError(`unknown argument "${arg}"; npm start takes --dev and --only ${PART_NAMES.join("|")}[,…]`);
  }
  return { dev, only };
}

/** Whether `part` runs in this group. */
export function runs(args: Pick<StartArgs, "only">, part: PartName): boolean {
  return args.only === undefined || args.only.has(part);
}

/**
 * The settings a group of lone parts lacks, one line each (empty: it may start). A complete
 * group (no `--only`) needs nothing: every default names this machine.
 */
export function missingForParts(env: Env, only: ReadonlySet<PartName> | undefined): string[] {
  if (only === undefined) return [];
  const missing: string[] = [];
  const here = (part: PartName) => only.has(part);
  if (env.NEXTAUTH_SECRET === undefined) {
    missing.push("NEXTAUTH_SECRET is required with --only: every part on every machine must share the same secret (32+ characters)");
  }
  if (here("edge") && !here("web") && env.CONDUIT_WEB_UPSTREAM === undefined) {
    missing.push("CONDUIT_WEB_UPSTREAM is required for an edge without its web app: the web app's URL, e.g. http://10.0.0.2:3101");
  }
  if (here("edge") && !here("sidecar") && env.CONDUIT_SIDECAR_UPSTREAMS === undefined) {
    missing.push("CONDUIT_SIDECAR_UPSTREAMS is required for an edge without its sidecar: the sidecars' URLs, comma separated, e.g. http://10.0.0.3:3102");
  }
  if (!here("edge") && env.CONDUIT_PUBLIC_URL === undefined) {
    missing.push("CONDUIT_PUBLIC_URL is required without the edge: the URL people open (the edge's), e.g. https://conduit.example.com");
  }
  if (here("web") !== here("sidecar") && env.DATABASE_URL === undefined) {
    missing.push("DATABASE_URL is required when the web app and the sidecar are started separately: both must name the same database (PostgreSQL across machines)");
  }
  return missing;
}
