// Picks the scenario for a prompt and the step for a model call. The only state is the error
// ledger: an error step must be served before the call it precedes can succeed, and the CLI's
// retry of that call is indistinguishable from the first attempt.
import { findScenarioTag } from "./conversation";
import { isErrorStep, type ErrorStep, type ResolvedStep, type Scenario, type StepContext } from "./scenario";

export type ScenarioChoice =
  | { kind: "scenario"; scenario: Scenario; by: "tag" | "trigger" | "fallback" }
  | { kind: "unknown-tag"; name: string }
  | { kind: "none" };

/** Tag first (`[scenario:NAME]`), then whole-word triggers in registration order, then the fallback. */
export function selectScenario(
  prompt: string,
  scenarios: ReadonlyMap<string, Scenario>,
  fallback: string | undefined,
): ScenarioChoice {
  const tag = findScenarioTag(prompt);
  if (tag !== undefined) {
    const scenario = scenarios.get(tag);
    return scenario ? { kind: "scenario", scenario, by: "tag" } : { kind: "unknown-tag", name: tag };
  }
  const words = new Set(prompt.toLowerCase().match(/[a-z0-9]+/g) ?? []);
  for (const scenario of scenarios.values()) {
    if (scenario.triggers?.some((trigger) => words.has(trigger.toLowerCase()))) {
      return { kind: "scenario", scenario, by: "trigger" };
    }
  }
  const fallbackScenario = fallback !== undefined ? scenarios.get(fallback) : undefined;
  return fallbackScenario ? { kind: "scenario", scenario: fallbackScenario, by: "fallback" } : { kind: "none" };
}

/** Counts how often each error step was served, per conversation; bounded so a long-lived demo server does not grow. */
export class ErrorLedger {
  private readonly served = new Map<string, number>();

  constructor(private readonly limit = 2000) {}

  count(key: string): number {
    return this.served.get(key) ?? 0;
  }

  record(key: string): void {
    const next = this.count(key) + 1;
    this.served.delete(key);
    this.served.set(key, next);
    if (this.served.size > this.limit) {
      const oldest = this.served.keys().next().value;
      if (oldest !== undefined) this.served.delete(oldest);
    }
  }

  clear(): void {
    this.served.clear();
  }
}

export interface PickedStep {
  /** `undefined`: the scenario has run out of steps (the caller sends the final text). */
  step: ResolvedStep | undefined;
}

function pendingError(
  errors: readonly { position: number; step: ErrorStep }[],
  conversationKey: string,
  ledger: ErrorLedger,
): ErrorStep | undefined {
  for (const { position, step } of errors) {
    const key = `${conversationKey}#${position}`;
    if (ledger.count(key) < (step.times ?? 1)) {
      ledger.record(key);
      return step;
    }
  }
  return undefined;
}

/**
 * The step answering call `ctx.stepIndex`. Static error steps belong to the reply step after them
 * (or to the final text when they come last) and are served first, each `times` times.
 */
export function pickStep(
  scenario: Scenario,
  ctx: StepContext,
  conversationKey: string,
  ledger: ErrorLedger,
): PickedStep {
  if (typeof scenario.steps === "function") return { step: scenario.steps(ctx) };
  let replyIndex = 0;
  let errors: { position: number; step: ErrorStep }[] = [];
  for (const [position, step] of scenario.steps.entries()) {
    if (typeof step !== "function" && isErrorStep(step)) {
      errors.push({ position, step });
      continue;
    }
    if (replyIndex === ctx.stepIndex) {
      const error = pendingError(errors, conversationKey, ledger);
      return { step: error ?? (typeof step === "function" ? step(ctx) : step) };
    }
    replyIndex++;
    errors = [];
  }
  if (replyIndex === ctx.stepIndex) {
    const error = pendingError(errors, conversationKey, ledger);
    if (error) return { step: error };
  }
  return { step: undefined };
}
