/**
 * The browser's end of the approval contract. components/ may import only types from
 * server/shared/wire, so the event names are re-declared here and checked against the
 * contract's constants with `satisfies`: a renamed event fails the type check.
 */
import type { Socket } from "socket.io-client";
import type { Ack } from "@/server/shared/wire/ack";
import type { ApprovalCommand, ApprovalFact, ApprovalView, Decision } from "@/server/shared/wire/approval";
import { emitCommand, newCommandId, type CommandName } from "@/components/session/wire-client";

export const approvalCommand = {
  list: "approval:list",
  decide: "approval:decide",
} as const satisfies typeof ApprovalCommand;

export const approvalFact = {
  requested: "approval:requested",
  resolved: "approval:resolved",
  count: "approval:count",
} as const satisfies typeof ApprovalFact;

/** What a decision came to, as the card shows it. */
export type DecideOutcome = { ok: true } | { ok: false; code: string; message: string };

const decideProblems: Record<string, string> = {
  already_decided: "Someone else already decided this.",
  expired: "This approval expired before your answer arrived.",
  forbidden: "You cannot decide approvals in this workspace.",
  not_found: "This approval no longer exists.",
};

// emitCommand's name type lists the session commands; the approval ones share its retry rules.
function emit<T>(
  socket: Socket,
  name: (typeof approvalCommand)[keyof typeof approvalCommand],
  payload: unknown,
): Promise<Ack<T>> {
  return emitCommand<T>(socket, name as unknown as CommandName, payload);
}

/** The caller's inbox. Accepts a bare list or `{ approvals }` as the ack's data. */
export async function listApprovals(
  socket: Socket,
): Promise<{ ok: true; approvals: ApprovalView[] } | { ok: false; message: string }> {
  const ack = await emit<unknown>(socket, approvalCommand.list, {});
  if (!ack.ok) return { ok: false, message: ack.error.message || ack.error.code };
  const data = ack.data as ApprovalView[] | { approvals?: ApprovalView[] } | null;
  const approvals = Array.isArray(data) ? data : Array.isArray(data?.approvals) ? data.approvals : [];
  return { ok: true, approvals };
}

/**
 * Sends one decision. The commandId is made once here and kept across emitCommand's retries,
 * so a decision that reached the server before a timeout is not taken twice.
 */
export async function sendDecision(
  socket: Socket,
  approvalId: string,
  decision: Decision,
): Promise<{ outcome: DecideOutcome; view?: ApprovalView }> {
  const ack = await emit<unknown>(socket, approvalCommand.decide, { approvalId, decision, commandId: newCommandId() });
  if (!ack.ok) {
    const { code, message } = ack.error;
    return { outcome: { ok: false, code, message: decideProblems[code] ?? (message || code) } };
  }
  return { outcome: { ok: true }, view: isApprovalView(ack.data) ? ack.data : undefined };
}

/** True for a value shaped like an {@link ApprovalView} (the decide ack may carry the new record). */
export function isApprovalView(value: unknown): value is ApprovalView {
  if (value === null || typeof value !== "object") return false;
  const v = value as Partial<ApprovalView>;
  return typeof v.id === "string" && typeof v.status === "string" && typeof v.toolName === "string";
}
