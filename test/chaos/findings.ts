/**
 * What one chaos scenario found (its faults, the suite's counts, the problems and notes it
 * reports), and the two steps every scenario shares: a prompt recorded for the prompt check, and
 * all the checks of one session against the database.
 */
import { randomUUID } from "node:crypto";
import type { Ack } from "@/server/shared/wire/ack";
import type { CommandAccepted } from "@/server/shared/wire/session";
import {
  checkApprovals,
  checkCost,
  checkPrompts,
  checkViews,
  type ChaosClient,
  type ChaosWorld,
  type Counts,
  type SentPrompt,
} from "./rig";

export interface ScenarioOutcome {
  faults: number;
  counts: Partial<Counts>;
  problems: string[];
  notes: string[];
}

/** Collects one scenario's findings. */
export class Findings {
  faults = 0;
  counts: Partial<Counts> = {};
  problems: string[] = [];
  notes: string[] = [];
  add(key: keyof Counts, n: number, problems: readonly string[] = []): void {
    this.counts[key] = (this.counts[key] ?? 0) + n;
    this.problems.push(...problems);
  }
  expect(condition: boolean, problem: string): void {
    if (!condition) this.problems.push(problem);
  }
  outcome(): ScenarioOutcome {
    return { faults: this.faults, counts: this.counts, problems: this.problems, notes: this.notes };
  }
}

/** Sends a prompt and records it (with whether it was acknowledged) for {@link checkAll}. */
export async function prompt(
  client: ChaosClient,
  sessionId: string,
  text: string,
  sent: SentPrompt[],
  options: { loseAcks?: number; attempts?: number; ackTimeoutMs?: number } = {},
): Promise<Ack<CommandAccepted> | undefined> {
  const commandId = randomUUID();
  const record: SentPrompt = { sessionId, commandId, acked: false };
  sent.push(record);
  const ack = await client.command<CommandAccepted>("session:prompt", { sessionId, text, commandId }, options);
  record.acked = ack?.ok === true;
  return ack;
}

/** Every check of one session: the clients' views, the prompts sent, cost and approvals against the log. */
export async function checkAll(
  world: Pick<ChaosWorld, "db">,
  f: Findings,
  sessionId: string,
  clients: readonly ChaosClient[],
  sent: readonly SentPrompt[],
  viewWaitMs?: number,
): Promise<void> {
  const views = await checkViews(world, sessionId, clients, viewWaitMs);
  f.add("events_lost", views.lost);
  f.add("events_dup", views.dup, views.problems);
  const prompts = await checkPrompts(
    world,
    sent.filter((p) => p.sessionId === sessionId),
  );
  f.add("prompts_lost", prompts.lost, prompts.problems);
  f.add("events_dup", prompts.dup);
  const cost = await checkCost(world, sessionId);
  f.add("cost_double", cost.double, cost.problems);
  const approvals = await checkApprovals(world, sessionId);
  f.add("approvals_lost", approvals.lost, approvals.problems);
}
