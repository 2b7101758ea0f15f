/**
 * Approvals across sidecars. A question waits in the approval service of the sidecar whose CLI
 * asked it (the session's owner). A decision made on a node that does not hold the question,
 * for a session another node runs, is sent to that owner, whose service decides it exactly as a
 * local click: the decider's role read again from the database by the owner (a refusal logged
 * here), the row settled with the conditional UPDATE, the CLI answered, the audit written, the decision memoized by
 * `commandId`, so a retry through any node is answered once). Withdrawals (a decider's role
 * lowered) reach every live node's pending questions.
 *
 * Owns: routing decisions and withdrawals to the right node. Must not: settle rows itself.
 */
import type { Logger } from "pino";
import { z } from "zod";
import type { Db } from "@/server/db/client";
import { findApproval } from "@/server/db/approvals";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { ZDecision, type ApprovalView, type Decision } from "@/server/shared/wire/approval";
import type { ApprovalService, Decider } from "@/server/sidecar/approval/approval-service";
import type { ClusterDirectory } from "./cluster-directory";
import type { CommandBus } from "./command-bus";
import type { createSessionRouter } from "./command-forwarder";

export interface ClusterApprovals {
  decide(user: Decider, approvalId: string, decision: Decision, commandId: string): Promise<ApprovalView>;
  /** `ApprovalService.withdrawFrom` here and on every other live node. */
  withdrawFrom(userId: string, decidesIn: ReadonlySet<string>): void;
}

const ZForwardedDecision = z.object({
  user: z.object({ id: z.string().min(1), name: z.string() }),
  approvalId: z.string().min(1),
  decision: ZDecision,
  commandId: z.string().min(1),
});
const ZWithdraw = z.object({ userId: z.string().min(1), decidesIn: z.array(z.string()) });

export function createClusterApprovals(deps: {
  service: ApprovalService;
  db: Db;
  directory: ClusterDirectory;
  bus: CommandBus;
  router: ReturnType<typeof createSessionRouter>;
  log: Logger;
  onError?: (err: unknown) => void;
}): ClusterApprovals {
  const { service, directory, bus, router, log } = deps;
  bus.handle("approval.decide", async (args, { from }) => {
    const parsed = ZForwardedDecision.safeParse(args);
    if (!parsed.success) {
      log.warn({ from }, "a forwarded approval decision was refused: it names no decider or approval");
      throw new AppError(ErrorCode.invalidPayload, "A forwarded decision names no decider or approval.");
    }
    const a = parsed.data;
    try {
      // The service reads the decider's role now, as for a local click.
      return await service.decide({ id: a.user.id, name: a.user.name }, a.approvalId, a.decision, a.commandId);
    } catch (err) {
      if (err instanceof AppError && (err.code === ErrorCode.forbidden || err.code === ErrorCode.notFound)) {
        log.warn({ from, actor: a.user.id, approvalId: a.approvalId, code: err.code }, "a forwarded approval decision was refused by the owner's role check");
      }
      throw err;
    }
  });
  bus.handle("approval.withdraw", async (args) => {
    const a = ZWithdraw.parse(args);
    service.withdrawFrom(a.userId, new Set(a.decidesIn));
    return null;
  });
  /** The other node running the approval's session, or null (here, nobody, or no such approval). */
  const ownerElsewhere = async (approvalId: string): Promise<string | null> => {
    const row = await findApproval(deps.db, approvalId);
    if (!row) return null;
    const owner = await directory.ownerOf(row.sessionId);
    return owner !== null && owner !== directory.selfId ? owner : null;
  };
  return {
    async decide(user, approvalId, decision, commandId) {
      // Waiting here, or settled or unknown: the local service answers (and remembers the command).
      const elsewhere = service.holds(approvalId) ? null : await ownerElsewhere(approvalId);
      if (elsewhere === null) return service.decide(user, approvalId, decision, commandId);
      // The owner's service decides it and remembers the command: a retry through any node gets one outcome.
      return router.forward<ApprovalView>(elsewhere, "approval.decide", {
        user: { id: user.id, name: user.name },
        approvalId,
        decision,
        commandId,
      });
    },
    withdrawFrom(userId, decidesIn) {
      service.withdrawFrom(userId, decidesIn);
      void directory
        .liveNodes()
        .then((nodes) =>
          Promise.all(
            nodes
              .filter((n) => n.id !== directory.selfId)
              .map((n) => bus.notify(n.id, "approval.withdraw", { userId, decidesIn: [...decidesIn] })),
          ),
        )
        .catch((err: unknown) => deps.onError?.(err));
    },
  };
}
