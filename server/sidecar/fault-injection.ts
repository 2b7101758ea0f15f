/**
 * Fault-injection points for the chaos suite (`npm run test:chaos`, docs/CHAOS.md). Inert unless
 * `CONDUIT_FAULT` names a point; refused outright when NODE_ENV is `production` (what `npm start`
 * gives its parts), so a stray variable can never crash a real deployment.
 *
 * Points:
 * - `crash-after-prompt-event`: the sidecar SIGKILLs itself right after a prompt's event is
 *   committed to the log and before any CLI receives the prompt (the lost-prompt window).
 */

export const faultPoints = ["crash-after-prompt-event"] as const;
export type FaultPoint = (typeof faultPoints)[number];

/** The armed point of `env`, or undefined. Throws for an unknown point or in production. */
export function armedFaultOf(env: Readonly<Record<string, string | undefined>>): FaultPoint | undefined {
  const value = env.CONDUIT_FAULT;
  if (value === undefined || value === "") return undefined;
  if (env.NODE_ENV === "production") {
    throw new Error("CONDUIT_FAULT is a test hook and is refused when NODE_ENV=production; unset it.");
  }
  if (!(faultPoints as readonly string[]).includes(value)) {
    throw new Error(`CONDUIT_FAULT=${value} is not a fault point (known: ${faultPoints.join(", ")}).`);
  }
  return value as FaultPoint;
}

let armed: FaultPoint | undefined;

/** Reads CONDUIT_FAULT once (the sidecar's main calls it at start, so a bad value stops the start). */
export function armFaults(env: Readonly<Record<string, string | undefined>> = process.env): FaultPoint | undefined {
  armed = armedFaultOf(env);
  return armed;
}

/** Dies here, at once and without cleanup, when `point` is armed. */
export function faultPoint(point: FaultPoint): void {
  if (armed === point) process.kill(process.pid, "SIGKILL");
}
