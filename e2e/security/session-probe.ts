/**
 * One live session of one member of a Conduit under attack, driven over its socket as a browser
 * would: prompts, every approval allowed, the first tool's outcome read back from the event log.
 * Shared by the security specs that attack from inside a session.
 */
import type { APIRequestContext } from "@playwright/test";
import type { Socket } from "socket.io-client";
import type { ApprovalView } from "../../server/shared/wire/approval";
import { commandId, connect, cookieHeader, emit } from "./clients";

export interface ToolOutcome {
  /** The tool's output as the CLI reported it. */
  text: string;
  isError: boolean;
  /** Whether a member was asked before the tool ran. */
  asked: boolean;
}

type Payload = { type?: string; message?: { content?: unknown } };

/** The tool_result blocks of a CLI `user` line. */
function toolResults(payload: unknown): { text: string; isError: boolean }[] {
  const p = payload as Payload;
  if (p?.type !== "user" || !Array.isArray(p.message?.content)) return [];
  return (p.message.content as { type?: string; content?: unknown; is_error?: boolean }[])
    .filter((b) => b.type === "tool_result")
    .map((b) => ({
      isError: b.is_error === true,
      text: typeof b.content === "string" ? b.content : Array.isArray(b.content) ? b.content.map((c: { text?: string }) => c.text ?? "").join("\n") : "",
    }));
}

/** One live session of one member, with its events and the approvals routed to that member. */
export class SessionProbe {
  events: { seq: number; kind: string; payload: unknown }[] = [];
  approvals: ApprovalView[] = [];

  private constructor(
    readonly socket: Socket,
    readonly sessionId: string,
  ) {}

  /** `worktree`: the session starts in a git worktree of its own (repository workspaces only). */
  static async open(client: APIRequestContext, baseURL: string, slug: string, options: { worktree?: boolean } = {}): Promise<SessionProbe> {
    const socket = await connect(baseURL, await cookieHeader(client));
    if (socket instanceof Error) throw socket;
    const created = await emit(socket, "session:create", { workspace: slug, mode: "default", commandId: commandId(), ...(options.worktree ? { worktree: true } : {}) });
    if (!created.ok) throw new Error(`session:create: ${JSON.stringify(created)}`);
    const probe = new SessionProbe(socket, (created.data as { id: string }).id);
    type Heard = { sessionId: string; seq: number; kind: string; payload: unknown };
    socket.on("session:event", (e: Heard) => {
      if (e.sessionId === probe.sessionId) probe.events.push(e);
    });
    // several events of one burst come as one message
    socket.on("session:events", (events: Heard[]) => {
      for (const e of events) if (e.sessionId === probe.sessionId) probe.events.push(e);
    });
    socket.on("approval:requested", (a: ApprovalView) => probe.approvals.push(a));
    const sub = await emit(socket, "session:subscribe", { sessionId: probe.sessionId, afterSeq: 0 });
    if (!sub.ok) throw new Error(`session:subscribe: ${JSON.stringify(sub)}`);
    for (const e of (sub.data as { events: { seq: number; kind: string; payload: unknown }[] }).events) probe.events.push(e);
    return probe;
  }

  /** The last event seq before the latest prompt this probe sent. */
  private promptFromSeq = 0;

  /** Waits for the `result` line of the turn of the latest prompt (a prompt sent before it joins that turn). */
  async turnEnded(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.events.some((e) => e.seq > this.promptFromSeq && e.kind === "cli" && (e.payload as Payload)?.type === "result")) {
      if (Date.now() > deadline) throw new Error("the turn did not end");
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Sends `prompt`, allows every approval it raises, and returns the first tool's outcome. */
  async runTool(prompt: string): Promise<ToolOutcome> {
    const fromSeq = Math.max(0, ...this.events.map((e) => e.seq));
    this.promptFromSeq = fromSeq;
    const askedBefore = this.approvals.length;
    const sent = await emit(this.socket, "session:prompt", { sessionId: this.sessionId, text: prompt, commandId: commandId() });
    if (!sent.ok) throw new Error(`session:prompt: ${JSON.stringify(sent)}`);
    const deadline = Date.now() + 60_000;
    let asked = false;
    for (;;) {
      const pending = this.approvals.slice(askedBefore).filter((a) => a.sessionId === this.sessionId);
      for (const approval of pending.slice(asked ? 1 : 0, 1)) {
        asked = true;
        const decided = await emit(this.socket, "approval:decide", { approvalId: approval.id, decision: { behavior: "allow" }, commandId: commandId() });
        if (!decided.ok) throw new Error(`approval:decide: ${JSON.stringify(decided)}`);
      }
      const result = this.events.filter((e) => e.seq > fromSeq && e.kind === "cli").flatMap((e) => toolResults(e.payload))[0];
      if (result) return { ...result, asked };
      if (Date.now() > deadline) throw new Error(`no tool result for ${prompt}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * Sends `prompt` (one that makes the model call a file tool), denies the approval it raises and
   * returns that approval as its card showed it (the review read from disk), after the turn ends.
   */
  async reviewAndDeny(prompt: string): Promise<ApprovalView> {
    const fromSeq = Math.max(0, ...this.events.map((e) => e.seq));
    const askedBefore = this.approvals.length;
    const sent = await emit(this.socket, "session:prompt", { sessionId: this.sessionId, text: prompt, commandId: commandId() });
    if (!sent.ok) throw new Error(`session:prompt: ${JSON.stringify(sent)}`);
    const deadline = Date.now() + 60_000;
    let view: ApprovalView | undefined;
    while (view === undefined) {
      view = this.approvals.slice(askedBefore).find((a) => a.sessionId === this.sessionId);
      if (Date.now() > deadline) throw new Error(`no approval for ${prompt}`);
      if (view === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    const decided = await emit(this.socket, "approval:decide", { approvalId: view.id, decision: { behavior: "deny", message: "security suite: denied" }, commandId: commandId() });
    if (!decided.ok) throw new Error(`approval:decide: ${JSON.stringify(decided)}`);
    while (!this.events.some((e) => e.seq > fromSeq && e.kind === "cli" && (e.payload as Payload)?.type === "result")) {
      if (Date.now() > deadline) throw new Error(`no result for ${prompt}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return view;
  }

  /** Sends `prompt` and waits for the turn's `result` line. */
  async turn(prompt: string): Promise<void> {
    const fromSeq = Math.max(0, ...this.events.map((e) => e.seq));
    const sent = await emit(this.socket, "session:prompt", { sessionId: this.sessionId, text: prompt, commandId: commandId() });
    if (!sent.ok) throw new Error(`session:prompt: ${JSON.stringify(sent)}`);
    const deadline = Date.now() + 60_000;
    while (!this.events.some((e) => e.seq > fromSeq && e.kind === "cli" && (e.payload as Payload)?.type === "result")) {
      if (Date.now() > deadline) throw new Error(`no result for ${prompt}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    await emit(this.socket, "session:stop", { sessionId: this.sessionId, commandId: commandId() });
  }

  close(): void {
    this.socket.close();
  }
}
