/**
 * Timestamps of a turn's and an approval's way through the sidecar, for `bench/browser-turn`
 * (`CONDUIT_LATENCY_TRACE=1`): one `conduit-latency {json}` line on stderr per stage, with the
 * time in epoch ms at sub-ms precision (`performance.timeOrigin + performance.now()`, the clock
 * Chromium's pages use too, so the bench can line sidecar and page stages up). Off by default:
 * then `mark` returns at its first branch and nothing is written.
 */
import { performance } from "node:perf_hooks";
import { ApprovalFact } from "@/server/shared/wire/approval";
import { SessionCommand, type WireEvent } from "@/server/shared/wire/session";

export type LatencyStage =
  /** a `session:prompt` command reached the sidecar's socket, before any check */
  | "prompt-received"
  /** the prompt's event is stored and emitted to the session's room */
  | "prompt-emitted"
  /** a CLI line of interest was emitted to the session's room (`line` says which) */
  | "line-emitted"
  /** the CLI's `can_use_tool` reached the approval service */
  | "approval-asked"
  /** the approval service read the session's workspace, members and rules */
  | "approval-context-read"
  /** the pending approval's row is written */
  | "approval-row-written"
  /** what the card shows (the file under review, the plan) is read */
  | "approval-review-read"
  /** the approval was sent to the deciders' rooms */
  | "approval-told"
  /** the prompt's wait for the before-turn snapshot ended: it goes to the CLI's stdin now */
  | "before-snapshot-waited"
  /** an event-log insert holding a stage's line ended (`started`: when it began) */
  | "events-inserted"
  /** the credential proxy's side of a model request (`ProxyTraceStage`) */
  | "proxy-request"
  | "proxy-request-sent"
  | "proxy-response"
  | "proxy-first-chunk";

export interface LatencyTrace {
  readonly enabled: boolean;
  mark(stage: LatencyStage, fields: Record<string, string | number | undefined>): void;
}

/** The prefix of every trace line. */
export const LATENCY_TRACE_PREFIX = "conduit-latency ";

export function createLatencyTrace(
  enabled: boolean,
  write: (line: string) => void = (line) => void process.stderr.write(line),
): LatencyTrace {
  return {
    enabled,
    mark(stage, fields) {
      if (!enabled) return;
      const t = performance.timeOrigin + performance.now();
      // mono: CLOCK_MONOTONIC in µs, the clock of Chromium's traces (epoch clocks of two processes can drift apart)
      const mono = Number(process.hrtime.bigint() / 1000n);
      write(`${LATENCY_TRACE_PREFIX}${JSON.stringify({ stage, t, mono, ...fields })}\n`);
    },
  };
}

/**
 * Per session, whether a turn's first text delta was seen since the session's last prompt. The
 * bench reads only that one: marking every delta wrote ~50 lines a turn, each a synchronous write
 * to the stderr pipe on the emit path (and relayed by `npm start` and read by the bench), an
 * observer's cost the bare CLI beside it never pays.
 */
class FirstDeltas {
  private readonly seen = new Set<string>();
  /** A prompt of the session (or its first delta not written after all): the next delta is a first. */
  prompt(sessionId: string): void {
    this.seen.delete(sessionId);
  }
  /** True for the session's first delta since its last prompt. */
  first(sessionId: string): boolean {
    if (this.seen.has(sessionId)) return false;
    this.seen.add(sessionId);
    return true;
  }
}

const emittedDeltas = new WeakMap<LatencyTrace, FirstDeltas>();

/** Which emitted events are stages: the prompt, the turn's first streamed text, each assistant line, a permission question. */
export function traceEmittedEvent(trace: LatencyTrace, event: WireEvent): void {
  if (!trace.enabled) return;
  let deltas = emittedDeltas.get(trace);
  if (!deltas) emittedDeltas.set(trace, (deltas = new FirstDeltas()));
  const base = { sessionId: event.sessionId, seq: event.seq, arrivedAt: Date.parse(event.at) };
  if (event.kind === "prompt") {
    deltas.prompt(event.sessionId);
    trace.mark("prompt-emitted", base);
    return;
  }
  if (event.kind !== "cli" || event.payload === null || typeof event.payload !== "object") return;
  const m = event.payload as { type?: string; request?: { subtype?: string }; event?: { type?: string; delta?: { type?: string } } };
  const line =
    m.type === "assistant"
      ? "assistant"
      : m.type === "control_request" && m.request?.subtype === "can_use_tool"
        ? "can_use_tool"
        : m.type === "stream_event" && m.event?.type === "content_block_delta" && m.event.delta?.type === "text_delta" && deltas.first(event.sessionId)
          ? "text_delta"
          : undefined;
  if (line) trace.mark("line-emitted", { ...base, line });
}

/** Marks each `session:prompt` command as it reaches this sidecar's socket layer (before its checks and the hub). */
export function traceReceivedPrompts(
  trace: LatencyTrace,
  io: { on(event: "connection", listener: (socket: { use(fn: (packet: unknown[], next: () => void) => void): unknown }) => void): unknown },
): void {
  if (!trace.enabled) return;
  io.on("connection", (socket) =>
    socket.use((packet, next) => {
      const payload = packet[1] as { sessionId?: unknown } | undefined;
      if (packet[0] === SessionCommand.prompt && typeof payload?.sessionId === "string") trace.mark("prompt-received", { sessionId: payload.sessionId });
      next();
    }),
  );
}

/** The approval service's decider, marking when a `can_use_tool` question reaches it. */
export function tracedDecider<S extends { sessionId: string }, Q extends { requestId: string }, R>(
  trace: LatencyTrace,
  decide: (session: S, question: Q) => Promise<R>,
): (session: S, question: Q) => Promise<R> {
  if (!trace.enabled) return decide;
  return (session, question) => {
    trace.mark("approval-asked", { sessionId: session.sessionId, requestId: question.requestId });
    return decide(session, question);
  };
}

/** The approval service's `notify`, marking when an approval goes to its deciders' rooms. */
export function tracedNotify(
  trace: LatencyTrace,
  notify: (userIds: readonly string[], event: string, payload: unknown) => void,
): (userIds: readonly string[], event: string, payload: unknown) => void {
  if (!trace.enabled) return notify;
  return (userIds, event, payload) => {
    notify(userIds, event, payload);
    if (event !== ApprovalFact.requested) return;
    const view = payload as { id?: string; sessionId?: string };
    trace.mark("approval-told", { sessionId: view.sessionId, approvalId: view.id });
  };
}

/**
 * Marks when the prompt's wait for its before-turn snapshot ends (the hub writes the prompt to the
 * CLI right after). Wraps the instance's method, and only while tracing: the hub is unaware.
 */
export function traceBeforeSnapshots(
  trace: LatencyTrace,
  snapshots: { promptDelivered(session: { sessionId: string }, promptSeq: number): () => Promise<void> },
): void {
  if (!trace.enabled) return;
  const promptDelivered = snapshots.promptDelivered.bind(snapshots);
  snapshots.promptDelivered = (session, promptSeq) => {
    const wait = promptDelivered(session, promptSeq);
    return async () => {
      await wait();
      trace.mark("before-snapshot-waited", { sessionId: session.sessionId, seq: promptSeq });
    };
  };
}

/** What {@link tracedEventStore} wraps: the event writer's store (its inserts). */
interface RowStore<Row extends TracedRow, Stored extends { seq: number }> {
  insert(rows: readonly Row[]): Promise<Stored[]>;
}

/** What {@link tracedEventStore} reads of a row. */
interface TracedRow {
  sessionId: string;
  kind: string;
  payload: string;
}

/**
 * Marks each event-log insert that holds a stage's line (a turn's first text delta, a permission
 * question): when it started and ended (`t`), how many rows it had, and those lines' seqs. Splits
 * a line's time from its arrival to its emit into the wait for the insert and the insert itself.
 */
export function tracedEventStore<Row extends TracedRow, Stored extends { seq: number }, S extends RowStore<Row, Stored>>(
  trace: LatencyTrace,
  store: S,
): S {
  if (!trace.enabled) return store;
  const deltas = new FirstDeltas();
  const marked = (row: Row) => {
    if (row.kind === "prompt") deltas.prompt(row.sessionId);
    if (row.payload.includes('"can_use_tool"')) return true;
    return row.payload.includes('"text_delta"') && deltas.first(row.sessionId);
  };
  return {
    ...store,
    insert: async (rows: readonly Row[]) => {
      const started = performance.timeOrigin + performance.now();
      const marks = rows.map(marked);
      let stored: Stored[];
      try {
        stored = await store.insert(rows);
      } catch (err) {
        // not written (a seq clash the writer retries): its first delta is still to be marked
        for (const [i, row] of rows.entries()) {
          if (marks[i] && !row.payload.includes('"can_use_tool"')) deltas.prompt(row.sessionId);
        }
        throw err;
      }
      const seqs = stored.filter((_, i) => marks[i]).map((r) => r.seq);
      if (seqs.length > 0) trace.mark("events-inserted", { started, rows: rows.length, seqs: seqs.join(",") });
      return stored;
    },
  };
}
