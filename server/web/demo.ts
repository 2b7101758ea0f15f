import { getEnv } from "@/server/env/env";

/** True when Conduit runs against its scripted offline model (no API key configured). */
export function isDemoModel(): boolean {
  return getEnv().CONDUIT_DEMO_MODEL;
}
