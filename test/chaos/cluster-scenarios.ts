/**
 * The chaos suite's cluster scenarios (issue #14, docs/CHAOS.md C1–C4). Each starts its own
 * two-sidecar cluster on PostgreSQL and Redis (test/cluster/rig.ts) beside the suite's one-sidecar
 * world, and closes it at the end. Without CONDUIT_TEST_PG_URL / CONDUIT_TEST_REDIS_URL they are
 * skipped with that reason (reported as skipped, never passed); `.ci/run` sets both.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Ack } from "@/server/shared/wire/ack";
import { ApprovalFact, type ApprovalResolved } from "@/server/shared/wire/approval";
import type { CommandAccepted } from "@/server/shared/wire/session";
import { startCluster, type Cluster, type ClusterNode } from "@/test/cluster/rig";
import { until } from "@/test/until";
import { isPhase, isResult, waitForEvent, type ChaosClient, type SentPrompt } from "./rig";
import { checkAll as checkAllOf, Findings, prompt as promptWith, type ScenarioOutcome } from "./findings";
import type { Scenario } from "./scenarios";

function clusterSkip(): string | undefined {
  if (!process.env.CONDUIT_TEST_PG_URL)
    return "needs PostgreSQL: CONDUIT_TEST_PG_URL is not set (`.ci/run` sets it; scripts/ci-postgres.sh)";
  if (!process.env.CONDUIT_TEST_REDIS_URL)
    return "needs Redis: CONDUIT_TEST_REDIS_URL is not set (`.ci/run` sets it; scripts/ci-redis.sh)";
  return undefined;
}

/** A prompt through a node (acks may wait on a forward to the owner: 20 s). */
const prompt = (client: ChaosClient, sessionId: string, text: string, sent: SentPrompt[]) =>
  promptWith(client, sessionId, text, sent, { ackTimeoutMs: 20_000 });

/** The suite's checks of one session; the clients' views may need 20 s to settle across nodes. */
const checkAll = (
  cluster: Cluster,
  f: Findings,
  sessionId: string,
  clients: readonly ChaosClient[],
  sent: readonly SentPrompt[],
) => checkAllOf(cluster, f, sessionId, clients, sent, 20_000);

/**
 * Sends a client's next connections to another node: what the edge does for a browser whose
 * sidecar died (its next WebSocket goes to a healthy upstream).
 */
function moveClient(client: ChaosClient, to: ClusterNode): void {
  (client.socket.io as unknown as { uri: string }).uri = `http://127.0.0.1:${to.port}`;
}

const isOn = (client: ChaosClient, node: ClusterNode) =>
  (client.socket.io as unknown as { uri: string }).uri.endsWith(`:${node.port}`);

async function withCluster(run: (cluster: Cluster) => Promise<ScenarioOutcome>): Promise<ScenarioOutcome> {
  const cluster = await startCluster({ sidecars: 2, keep: process.argv.includes("--keep") });
  try {
    return await run(cluster);
  } finally {
    await cluster.close();
  }
}

/**
 * A real-CLI session created through `clients[0]` and watched by all of them: a quick first turn,
 * then a slow streamed one under way (its third part stored). Returns the node running it and the other.
 */
async function streamingSession(
  cluster: Cluster,
  f: Findings,
  clients: readonly [ChaosClient, ChaosClient, ...ChaosClient[]],
  sent: SentPrompt[],
): Promise<{ sessionId: string; owner: ClusterNode; survivor: ClusterNode }> {
  const [n1, n2] = cluster.nodes as [ClusterNode, ClusterNode];
  const [a, b] = clients;
  const sessionId = await cluster.createSession(a, "real");
  for (const client of clients) await client.watch(sessionId);
  const first = await prompt(a, sessionId, "[scenario:quick] first", sent);
  f.expect(first?.ok === true, `the first prompt was not accepted: ${JSON.stringify(first)}`);
  await waitForEvent(cluster, sessionId, isResult, 40_000, "the first turn's result");
  const owner = await cluster.ownerOf(sessionId);
  if (!owner) throw new Error("no sidecar holds the session's lease after its first turn");
  const survivor = owner === n1 ? n2 : n1;
  f.notes.push(`session owned by ${owner.id}; ${survivor.id} survives`);
  await prompt(b, sessionId, "[scenario:slow] stream for a while", sent);
  await until(
    async () =>
      (await cluster.db.sessionEvent.count({ where: { sessionId, kind: "cli", payload: { contains: "part 3." } } })) >
      0,
    30_000,
    "the slow turn streaming",
    20,
  );
  return { sessionId, owner, survivor };
}

/** A fake CLI's session on the first node, asking for approval of `text`'s command. Returns the approval, the node running it and the other. */
async function askingSession(cluster: Cluster, asker: ChaosClient, text: string, sent: SentPrompt[]) {
  const [n1, n2] = cluster.nodes as [ClusterNode, ClusterNode];
  const sessionId = await cluster.createSession(asker, "permission");
  await asker.watch(sessionId);
  await prompt(asker, sessionId, text, sent);
  const approval = await until(
    async () => (await cluster.db.approval.count({ where: { sessionId } })) > 0,
    30_000,
    "the approval request",
  ).then(() => cluster.db.approval.findFirstOrThrow({ where: { sessionId } }));
  const owner = await cluster.ownerOf(sessionId);
  if (!owner) throw new Error("no sidecar holds the session's lease while its CLI asks");
  return { sessionId, approval, owner, other: owner === n1 ? n2 : n1 };
}

/** A cluster scenario: its own two-sidecar cluster, findings and sent prompts for `body`; skipped without PostgreSQL and Redis. */
function clusterScenario(
  meta: Pick<Scenario, "id" | "title" | "timeoutMs">,
  body: (cluster: Cluster, f: Findings, sent: SentPrompt[]) => Promise<void>,
): Scenario {
  return {
    ...meta,
    skip: clusterSkip,
    run: () =>
      withCluster(async (cluster) => {
        const f = new Findings();
        await body(cluster, f, []);
        return f.outcome();
      }),
  };
}

/** C1: kill -9 of the owning sidecar mid-turn, clients on both nodes; adoption and --resume on the survivor. */
const c1 = clusterScenario(
  {
    id: "C1",
    title: "cluster: kill -9 of the owning sidecar mid-turn (real CLI, clients on both sidecars); the survivor resumes",
    timeoutMs: 150_000,
  },
  async (cluster, f, sent) => {
    const [n1, n2] = cluster.nodes as [ClusterNode, ClusterNode];
    const a = await cluster.client("C1-owner-on-1", n1);
    const b = await cluster.client("C1-owner-on-2", n2);
    const c = await cluster.client("C1-editor-on-2", n2, cluster.editor);
    const { sessionId, owner, survivor } = await streamingSession(cluster, f, [a, b, c], sent);
    const killedAt = Date.now();
    await cluster.kill9(owner);
    f.faults += 1;
    // the dead node's clients come back through "the edge", to the survivor
    for (const client of [a, b, c]) if (isOn(client, owner)) moveClient(client, survivor);
    await waitForEvent(
      cluster,
      sessionId,
      isPhase("turn-interrupted"),
      60_000,
      "the turn-interrupted notice after adoption",
    );
    f.notes.push(`cut-off turn marked ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
    for (const client of [a, b, c]) await client.connected(30_000);
    // the next prompt, through whichever node the client is on now, resumes the conversation on the survivor
    let next: Ack<CommandAccepted> | undefined;
    await until(
      async () => {
        next = await prompt(c, sessionId, "[scenario:quick] after the failover", sent);
        return next?.ok === true;
      },
      30_000,
      "a prompt accepted after the failover",
      500,
    ).catch(() => f.problems.push(`no prompt was accepted after the failover: ${JSON.stringify(next)}`));
    await until(
      async () =>
        (await cluster.db.sessionEvent.count({
          where: { sessionId, kind: "cli", payload: { contains: '"type":"result"' } },
        })) >= 2,
      60_000,
      "the resumed turn's result",
    ).catch(() => f.problems.push("the resumed turn never ended"));
    f.notes.push(`answered ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
    const newOwner = await cluster.ownerOf(sessionId);
    f.expect(
      newOwner === survivor,
      `the session is not run by the survivor after the failover (${newOwner?.id ?? "nobody"})`,
    );
    const spawned = await cluster.db.sessionEvent.findMany({
      where: { sessionId, kind: "process", payload: { contains: '"phase":"spawned"' } },
      orderBy: { seq: "asc" },
    });
    f.expect(
      spawned.length >= 2 && spawned.at(-1)!.payload.includes('"resumed":true'),
      "the survivor's child was not started with --resume",
    );
    const inits = (
      await cluster.db.sessionEvent.findMany({ where: { sessionId, kind: "cli" }, orderBy: { seq: "asc" } })
    )
      .map((r) => JSON.parse(r.payload) as { type?: string; subtype?: string; session_id?: string })
      .filter((m) => m.type === "system" && m.subtype === "init")
      .map((m) => m.session_id);
    f.expect(
      inits.length >= 2 && new Set(inits).size === 1,
      `the resumed child reported another conversation id (${inits.join(", ")})`,
    );
    // a prompt accepted but never answered would show in checkPrompts; every view equals the log
    await checkAll(cluster, f, sessionId, [a, b, c], sent);
    if (f.counts.events_lost || f.counts.events_dup) {
      const tail = await cluster.db.sessionEvent.findMany({
        where: { sessionId },
        orderBy: { seq: "desc" },
        take: 6,
      });
      f.notes.push(
        `log tail: ${tail
          .reverse()
          .map(
            (r) =>
              `${r.seq} ${r.kind}${r.kind === "process" ? `:${(JSON.parse(r.payload) as { phase?: string }).phase}` : ""}`,
          )
          .join(", ")}; views end at ${[a, b, c].map((x) => `${x.name}=${x.view(sessionId).last}`).join(" ")}`,
      );
    }
  },
);

/** C2: a decision made on the sidecar that does not run the session reaches the owner's CLI, once. */
const c2 = clusterScenario(
  {
    id: "C2",
    title: "cluster: a decision made on the non-owning sidecar answers the owner's CLI, once",
    timeoutMs: 90_000,
  },
  async (cluster, f, sent) => {
    const asker = await cluster.client("C2-asker-on-1", cluster.nodes[0]!);
    const { sessionId, approval, owner, other } = await askingSession(cluster, asker, "echo across", sent);
    f.notes.push(`CLI on ${owner.id}; decided on ${other.id}`);
    const decider = await cluster.client("C2-decider-elsewhere", other, cluster.editor);
    const rival = await cluster.client("C2-rival-on-owner", owner, cluster.owner);
    await decider.watch(sessionId);
    // the decision through the other node, its first two acks lost (the same commandId three times)
    const decide = { approvalId: approval.id, decision: { behavior: "allow" }, commandId: randomUUID() };
    const first = await decider.command<{ status: string }>("approval:decide", decide, { loseAcks: 2 });
    f.faults += 2;
    f.expect(
      first?.ok === true,
      `the decision on the non-owning sidecar was not acknowledged: ${JSON.stringify(first)}`,
    );
    const late = await rival.command<{ status: string }>("approval:decide", {
      approvalId: approval.id,
      decision: { behavior: "deny", message: "no" },
      commandId: randomUUID(),
    });
    f.expect(
      late?.ok === false && late.error.code === "already_decided",
      `a second decision on the owner was not refused: ${JSON.stringify(late)}`,
    );
    await waitForEvent(cluster, sessionId, isResult, 30_000, "the tool's turn ending");
    const toolRuns = await cluster.db.sessionEvent.count({
      where: { sessionId, kind: "cli", payload: { contains: "ran: echo across" } },
    });
    f.expect(
      toolRuns === 2,
      `the tool result and answer appear ${toolRuns} times (want one tool_result and one result)`,
    );
    const decisions = await cluster.db.sessionEvent.count({ where: { sessionId, kind: "decision" } });
    f.expect(decisions === 1, `${decisions} decision events for one approval`);
    const row = await cluster.db.approval.findUniqueOrThrow({ where: { id: approval.id } });
    f.expect(
      row.status === "allowed" && row.decidedById === cluster.editor.id,
      `the approval is ${row.status}, decided by ${row.decidedById ?? "nobody"}`,
    );
    await checkAll(cluster, f, sessionId, [asker, decider], sent);
  },
);

/**
 * C3: a polite stop (SIGTERM, as a deploy restarts a node) of the owning sidecar mid-turn, clients
 * on both nodes. The stopping node's last events (its child's exit, the session stopped) reach the
 * other node's clients live, and its leases are released at once: the next prompt is taken by the
 * survivor without waiting for a lease to expire.
 */
const c3 = clusterScenario(
  {
    id: "C3",
    title:
      "cluster: SIGTERM of the owning sidecar mid-turn; its last events reach the other node's clients, the survivor resumes at once",
    timeoutMs: 120_000,
  },
  async (cluster, f, sent) => {
    const [n1, n2] = cluster.nodes as [ClusterNode, ClusterNode];
    const a = await cluster.client("C3-owner-on-1", n1);
    const b = await cluster.client("C3-owner-on-2", n2);
    const { sessionId, owner, survivor } = await streamingSession(cluster, f, [a, b], sent);
    const stoppedAt = Date.now();
    await owner.process.stop();
    f.faults += 1;
    f.notes.push(`owner stopped in ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s`);
    const ownerLog = readFileSync(owner.process.logFile, "utf8");
    const failedEmits = ownerLog.split("publishing an emit to the other sidecars failed").length - 1;
    f.expect(failedEmits === 0, `the stopping node failed to publish ${failedEmits} emits to the other node`);
    f.expect((await cluster.ownerOf(sessionId)) === undefined, "the stopped node still holds the session's lease");
    // The client on the survivor has the stopping node's last events without asking again.
    const lastSeq =
      (await cluster.db.sessionEvent.aggregate({ where: { sessionId }, _max: { seq: true } }))._max.seq ?? 0;
    await until(
      async () => b.view(sessionId).last >= lastSeq,
      10_000,
      "the survivor's client receiving the stopped node's last events",
      50,
    ).catch(() =>
      f.problems.push(`the client on ${survivor.id} saw up to seq ${b.view(sessionId).last}, the log holds ${lastSeq}`),
    );
    for (const client of [a, b]) if (isOn(client, owner)) moveClient(client, survivor);
    // The prompt through the survivor's client, while the other one reconnects.
    const results = () =>
      cluster.db.sessionEvent.count({ where: { sessionId, kind: "cli", payload: { contains: '"type":"result"' } } });
    const resultsBefore = await results();
    const sentAt = Date.now();
    const next = await prompt(b, sessionId, "[scenario:quick] after the restart", sent);
    f.expect(next?.ok === true, `the prompt after the stop was not accepted: ${JSON.stringify(next)}`);
    f.notes.push(
      `prompt sent ${((sentAt - stoppedAt) / 1000).toFixed(1)} s after the stop began, acknowledged in ${((Date.now() - sentAt) / 1000).toFixed(1)} s`,
    );
    await until(async () => (await results()) > resultsBefore, 30_000, "the resumed turn's result").catch(() =>
      f.problems.push("the resumed turn never ended"),
    );
    for (const client of [a, b]) await client.connected(30_000);
    const answeredS = (Date.now() - stoppedAt) / 1000;
    f.notes.push(`answered ${answeredS.toFixed(1)} s after the stop began`);
    f.expect((await cluster.ownerOf(sessionId)) === survivor, "the survivor does not hold the session after the stop");
    const spawned = await cluster.db.sessionEvent.findMany({
      where: { sessionId, kind: "process", payload: { contains: '"phase":"spawned"' } },
      orderBy: { seq: "asc" },
    });
    f.expect(
      spawned.length >= 2 && spawned.at(-1)!.payload.includes('"resumed":true'),
      "the survivor's child was not started with --resume",
    );
    await checkAll(cluster, f, sessionId, [a, b], sent);
  },
);

/**
 * C4: a polite stop of the node whose CLI is asking. Its pending approval is cancelled, and the
 * decider connected to the other node sees it resolved (the inbox card goes) without reloading.
 */
const c4 = clusterScenario(
  {
    id: "C4",
    title: "cluster: SIGTERM of the node whose CLI asks; the decider on the other node sees the approval cancelled",
    timeoutMs: 90_000,
  },
  async (cluster, f, sent) => {
    const asker = await cluster.client("C4-asker-on-1", cluster.nodes[0]!);
    const { sessionId, approval, owner, other } = await askingSession(cluster, asker, "echo before the restart", sent);
    const decider = await cluster.client("C4-decider-elsewhere", other, cluster.editor);
    const resolved: Pick<ApprovalResolved, "approvalId" | "status">[] = [];
    decider.socket.on(ApprovalFact.resolved, (fact: ApprovalResolved) => resolved.push(fact));
    await owner.process.stop();
    f.faults += 1;
    await until(
      async () => resolved.some((r) => r.approvalId === approval.id),
      10_000,
      "the decider's approval:resolved",
      50,
    ).catch(() =>
      f.problems.push(`the decider on ${other.id} was never told the approval ended (${JSON.stringify(resolved)})`),
    );
    const row = await cluster.db.approval.findUniqueOrThrow({ where: { id: approval.id } });
    f.expect(row.status === "cancelled", `the approval is ${row.status} after its node stopped`);
    f.expect(
      resolved.find((r) => r.approvalId === approval.id)?.status === "cancelled",
      `the decider was told ${JSON.stringify(resolved)}, not that the approval was cancelled`,
    );
    // the asker's node is gone: no view to compare; the prompt, cost and approvals against the log
    await checkAll(cluster, f, sessionId, [], sent);
  },
);

export const clusterScenarios: Scenario[] = [c1, c2, c3, c4];
