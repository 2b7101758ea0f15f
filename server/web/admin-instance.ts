/**
 * Facts about this instance for its administrators: sign-up policy, CLI version, demo model,
 * sandbox setting and whether bubblewrap is installed, database kind (never a password), live
 * sessions, memory. Read on each request; nothing here is secret.
 */
import { readSandboxStatus } from "@/server/web/sandbox-status";
import { accessSync, constants } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { getDb } from "@/server/db/client";
import { DEFAULT_DATABASE_URL, findProjectRoot, parseDatabaseUrl, redactUrl } from "@/server/db/database-url";
import { getEnv } from "@/server/env/env";
import type { InstanceView } from "@/server/shared/wire/admin";
import { liveSessionStatuses } from "@/server/shared/wire/session";

/** Statuses of a session whose CLI child is (about to be) up. */
const liveStatuses: string[] = [...liveSessionStatuses];

/** The first executable `name` on PATH, or null. */
export function findOnPath(name: string, pathVar = process.env.PATH ?? ""): string | null {
  for (const dir of pathVar.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** The version of the pinned `@anthropic-ai/claude-code` package (the sidecar's CLI unless CLAUDE_CLI_PATH says otherwise). */
async function pinnedCliVersion(): Promise<string | null> {
  const file = path.join(findProjectRoot(), "node_modules", "@anthropic-ai", "claude-code", "package.json");
  try {
    const pkg = JSON.parse(await readFile(file, "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : null;
  } catch {
    return null;
  }
}

/** Where the database is, without credentials: the SQLite file, or PostgreSQL's host and database. */
function databaseOf(url: string): InstanceView["database"] {
  const target = parseDatabaseUrl(url);
  if (target.provider === "sqlite") return { kind: "SQLite", location: target.file };
  try {
    const parsed = new URL(target.url);
    return {
      kind: "PostgreSQL",
      location: `${parsed.hostname}${parsed.port ? `:${parsed.port}` : ""}${parsed.pathname}`,
    };
  } catch {
    return { kind: "PostgreSQL", location: redactUrl(target.url) };
  }
}

/** The instance's facts now. */
export async function readInstance(): Promise<InstanceView> {
  const env = getEnv();
  const [version, liveSessions, reported] = await Promise.all([
    env.CLAUDE_CLI_PATH ? Promise.resolve(null) : pinnedCliVersion(),
    getDb().session.count({ where: { status: { in: liveStatuses } } }),
    readSandboxStatus(),
  ]);
  const memory = process.memoryUsage();
  return {
    signupPolicy: env.CONDUIT_SIGNUP,
    cli: { version, path: env.CLAUDE_CLI_PATH ?? null },
    demoModel: env.CONDUIT_DEMO_MODEL,
    sandbox: {
      setting: env.CONDUIT_SANDBOX,
      bwrapPath: findOnPath("bwrap"),
      inForce: reported?.mode ?? null,
      warning: reported?.warning ?? null,
      credentialProxy: reported?.credentialProxy ?? null,
      policy: reported?.isolation?.policy ?? null,
      diagnosis: reported?.isolation?.diagnosis
        ? { problem: reported.isolation.diagnosis.problem, fix: reported.isolation.diagnosis.fix, detail: reported.isolation.diagnosis.detail ?? null }
        : null,
    },
    caps:
      reported?.caps === undefined
        ? null
        : {
            by: reported.caps.on ? (reported.caps.kind ?? "cgroup") : "off",
            limits: reported.caps.on ? (reported.caps.limits ?? null) : null,
            reason: reported.caps.reason ?? null,
          },
    database: databaseOf(process.env.DATABASE_URL || DEFAULT_DATABASE_URL),
    liveSessions,
    memory: {
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      hostFreeBytes: os.freemem(),
      hostTotalBytes: os.totalmem(),
    },
    nodeVersion: process.version,
    uptimeSec: Math.round(process.uptime()),
  };
}
