/**
 * What the sidecar tells the web app about session isolation: it writes this record to
 * `<CONDUIT_DATA_DIR>/sandbox-status.json` once it has chosen (CONDUIT_SANDBOX), and the web app
 * reads it for `/api/health` and the "sessions are not isolated" banner. A file, because the two
 * processes share the data directory and nothing else needs to flow.
 */
import { z } from "zod";

/** File name of the record, inside the data directory. */
export const sandboxStatusFile = "sandbox-status.json";

/** The record. `mode` is what is in force; `warning` says why `auto` fell back to none. */
export const ZSandboxStatus = z.object({
  mode: z.enum(["bwrap", "off"]),
  setting: z.enum(["auto", "bwrap", "off"]),
  warning: z.string().optional(),
  /** ISO time the sidecar decided. */
  at: z.string(),
  /** Requests go through the credential proxy (the CLI children never hold the operator's key). */
  credentialProxy: z.boolean(),
  /** The per-session memory and process caps (cgroups, server/sidecar/process/session-cgroup.ts); absent from older sidecars. */
  caps: z
    .object({ on: z.boolean(), memoryMb: z.number().optional(), pidsMax: z.number().optional(), reason: z.string().optional() })
    .optional(),
});
export type SandboxStatus = z.infer<typeof ZSandboxStatus>;
