/**
 * The isolation the sidecar reported (see server/shared/sandbox-status.ts), read from the data
 * directory at most once a second: the banner on every page and `/api/health` ask for it.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { getEnv } from "@/server/env/env";
import { sandboxStatusFile, ZSandboxStatus, type SandboxStatus } from "@/server/shared/sandbox-status";

let cached: { at: number; status: SandboxStatus | undefined } | undefined;

/** The sidecar's record, or undefined before the sidecar has written one (or when it is unreadable). */
export async function readSandboxStatus(now = Date.now()): Promise<SandboxStatus | undefined> {
  if (cached !== undefined && now - cached.at < 1000) return cached.status;
  let status: SandboxStatus | undefined;
  try {
    const file = path.join(/*turbopackIgnore: true*/ getEnv().CONDUIT_DATA_DIR, sandboxStatusFile);
    const parsed = ZSandboxStatus.safeParse(JSON.parse(await readFile(/*turbopackIgnore: true*/ file, "utf8")));
    status = parsed.success ? parsed.data : undefined;
  } catch {
    status = undefined;
  }
  cached = { at: now, status };
  return status;
}

/** True when the sidecar reported that sessions run without a sandbox. */
export async function sessionsUnisolated(): Promise<boolean> {
  return (await readSandboxStatus())?.mode === "off";
}

/**
 * Why sessions run without a sandbox, for the banner: `operator` (CONDUIT_SANDBOX=off), `fallback`
 * (auto found none: one tenant only); undefined while a sandbox is in force or before the sidecar reported.
 */
export async function unisolatedReason(): Promise<"operator" | "fallback" | undefined> {
  const status = await readSandboxStatus();
  if (status?.mode !== "off") return undefined;
  return status.setting === "off" ? "operator" : "fallback";
}
