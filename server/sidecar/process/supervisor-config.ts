/**
 * The supervisor's thresholds: how long to wait at each step of a shutdown, how restarts back
 * off, when silence counts as a stall and idleness as a reason to cull. One object, built from
 * the environment once (`supervisorConfigFromEnv`) and passed down, so tests use small numbers.
 */
import type { Env } from "@/server/env/env";

/** Every threshold of the supervisor and the session runner, in milliseconds unless named otherwise. */
export interface SupervisorConfig {
  /** After stdin is closed: how long the CLI may take to exit by itself (it takes ~50 ms when idle). */
  stdinGraceMs: number;
  /** After SIGTERM to the group: how long before SIGKILL. */
  termGraceMs: number;
  /** After SIGKILL: how long to wait for the exit before giving up on it (a process in D state). */
  killWaitMs: number;
  /** After the exit: how long to wait for stdout to close (a grandchild may hold it) before going on. */
  exitDrainMs: number;
  /** Consecutive restarts after crashes before the session is dead (DESIGN rule 7: five). */
  maxRestarts: number;
  /** Delay before restart n is `restartBaseMs * 2^(n-1)`, capped at `restartMaxMs`. */
  restartBaseMs: number;
  restartMaxMs: number;
  /** Silence during a turn beyond this marks the session stalled. */
  stallMs: number;
  /** No activity and nothing pending for this long stops the child (resumed on the next prompt); 0 never culls. */
  idleCullMs: number;
  /** Host → CLI control requests (interrupt, set_permission_mode, set_model) time out after this. */
  controlTimeoutMs: number;
  /** Longest stdout line accepted, in bytes (the framer's limit). */
  maxLineBytes: number;
  /** Longest stderr line kept; the rest of a longer line is cut off. */
  maxStderrLineBytes: number;
}

/** The defaults: what a production sidecar uses when the environment says nothing. */
export const defaultSupervisorConfig: Readonly<SupervisorConfig> = Object.freeze({
  stdinGraceMs: 2_000,
  termGraceMs: 3_000,
  killWaitMs: 5_000,
  exitDrainMs: 250,
  maxRestarts: 5,
  restartBaseMs: 500,
  restartMaxMs: 8_000,
  stallMs: 120_000,
  idleCullMs: 1_800_000,
  controlTimeoutMs: 30_000,
  maxLineBytes: 64 * 1024 * 1024,
  maxStderrLineBytes: 16 * 1024,
});

/** The part of the environment the supervisor reads. */
export type SupervisorEnv = Pick<Env, "CONDUIT_STALL_SEC" | "CONDUIT_IDLE_CULL_SEC">;

/** The defaults with the stall and idle-cull thresholds of the environment. */
export function supervisorConfigFromEnv(env: SupervisorEnv): SupervisorConfig {
  return {
    ...defaultSupervisorConfig,
    stallMs: env.CONDUIT_STALL_SEC * 1000,
    idleCullMs: env.CONDUIT_IDLE_CULL_SEC * 1000,
  };
}

/** Delay before restart number `attempt` (1-based): exponential from `restartBaseMs`, capped. */
export function restartDelayMs(
  attempt: number,
  config: Pick<SupervisorConfig, "restartBaseMs" | "restartMaxMs">,
): number {
  const exponent = Math.max(0, Math.min(attempt - 1, 30));
  return Math.min(config.restartMaxMs, config.restartBaseMs * 2 ** exponent);
}
