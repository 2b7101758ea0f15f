/**
 * What the sidecar tells the web app about session isolation: it writes this record to
 * `<CONDUIT_DATA_DIR>/sandbox-status.json` once it has chosen (CONDUIT_SANDBOX), and the web app
 * reads it for `/api/health` and the "sessions are not isolated" banner. A file, because the two
 * processes share the data directory and nothing else needs to flow.
 */
import { z } from "zod";

/** File name of the record, inside the data directory. */
export const sandboxStatusFile = "sandbox-status.json";

/**
 * Which limits hold on each session, and over what (a cgroup caps the session's tree; rlimits cap
 * each process's memory and the sidecar's whole user's processes). null: no such limit.
 */
const ZCapsLimits = z.object({
  memoryMb: z.number().nullable(),
  memoryScope: z.enum(["session", "process"]),
  processes: z.number().nullable(),
  processScope: z.enum(["session", "user"]),
  fileSizeMb: z.number().nullable(),
});

/** The record. `mode` is what is in force; `warning` says why `auto` fell back to none. */
export const ZSandboxStatus = z.object({
  mode: z.enum(["bwrap", "off"]),
  setting: z.enum(["auto", "bwrap", "off"]),
  warning: z.string().optional(),
  /** ISO time the sidecar decided. */
  at: z.string(),
  /** Requests go through the credential proxy (the CLI children never hold the operator's key). */
  credentialProxy: z.boolean(),
  /**
   * The per-session caps (cgroups, server/sidecar/process/session-cgroup.ts, else rlimits,
   * session-rlimit.ts); absent from older sidecars. `kind` and `limits` are absent from sidecars
   * before the rlimit fallback.
   */
  caps: z
    .object({
      on: z.boolean(),
      kind: z.enum(["cgroup", "rlimit"]).optional(),
      memoryMb: z.number().optional(),
      pidsMax: z.number().optional(),
      limits: ZCapsLimits.optional(),
      reason: z.string().optional(),
    })
    .optional(),
  /**
   * Who may start sessions under the isolation in force (server/domain/session/isolation-policy.ts),
   * and, without a sandbox under `auto`, what blocks bubblewrap and how to fix it.
   */
  isolation: z
    .object({
      policy: z.enum(["sandboxed", "operator-off", "single-tenant"]),
      diagnosis: z
        .object({ cause: z.string(), problem: z.string(), fix: z.string(), detail: z.string().optional() })
        .optional(),
    })
    .optional(),
});
export type SandboxStatus = z.infer<typeof ZSandboxStatus>;
export type CapsLimitsStatus = z.infer<typeof ZCapsLimits>;
