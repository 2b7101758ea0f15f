import { describe, expect, it } from "vitest";
import type { CanUseToolRequest } from "@/server/shared/claude-protocol/messages";
import { ZPermissionDecision } from "@/server/shared/claude-protocol/encode";
import { AppError } from "@/server/shared/errors/app-error";
import {
  type Approval,
  approvalExpiresAt,
  cancelApproval,
  cancelPendingApprovals,
  createApproval,
  decideApproval,
  dueForExpiry,
  expireApproval,
  mayDecide,
  nextExpiryAt,
  remainingMs,
  routeApproval,
} from "./approval-state";
import { allowBashCommand, allowRequest, denyRequest } from "./answers";

const T0 = 1_700_000_000_000;

const request: CanUseToolRequest = {
  subtype: "can_use_tool",
  tool_name: "Bash",
  display_name: "Bash",
  input: { command: "echo model-wrote >> /ws/out.txt", description: "Append a line" },
  description: "Append a line",
  permission_suggestions: [
    {
      type: "addRules",
      rules: [{ toolName: "Bash", ruleContent: "echo model-wrote *" }],
      behavior: "allow",
      destination: "localSettings",
    },
  ],
  blocked_path: "/ws/out.txt",
  tool_use_id: "toolu_1",
};

function pending(deadlineSeconds: number | null = 600, id = "ap1", now = T0): Approval {
  return createApproval({
    id,
    sessionId: "s1",
    requestId: `req-${id}`,
    request,
    sessionStarterId: "starter",
    deadlineSeconds,
    now,
  });
}

function errorCode(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
  throw new Error("expected an AppError");
}

describe("createApproval", () => {
  it("keeps what the request said and computes the deadline", () => {
    expect(pending()).toEqual({
      status: "pending",
      id: "ap1",
      sessionId: "s1",
      requestId: "req-ap1",
      toolName: "Bash",
      toolUseId: "toolu_1",
      input: request.input,
      suggestions: request.permission_suggestions,
      description: "Append a line",
      decisionReason: null,
      blockedPath: "/ws/out.txt",
      agentId: null,
      requiresUserInteraction: false,
      sessionStarterId: "starter",
      createdAt: T0,
      deadlineSeconds: 600,
      expiresAt: T0 + 600_000,
    });
  });

  it("a null deadline never expires; a non-positive one is refused", () => {
    expect(approvalExpiresAt(T0, null)).toBeNull();
    expect(approvalExpiresAt(T0, 2)).toBe(T0 + 2000);
    expect(errorCode(() => approvalExpiresAt(T0, 0))).toBe("invalid_payload");
    expect(errorCode(() => approvalExpiresAt(T0, Number.NaN))).toBe("invalid_payload");
  });
});

describe("who decides, and whose inbox", () => {
  const members = [
    { userId: "owner", role: "owner" as const },
    { userId: "viewer", role: "viewer" as const },
    { userId: "starter", role: "editor" as const },
    { userId: "editor2", role: "editor" as const },
  ];

  it("owners and editors may decide; viewers and non-members never", () => {
    expect(mayDecide("owner")).toBe(true);
    expect(mayDecide("editor")).toBe(true);
    expect(mayDecide("viewer")).toBe(false);
    expect(mayDecide(null)).toBe(false);
  });

  it("routes to the starter first, then owners and editors, never viewers", () => {
    expect(routeApproval({ sessionStarterId: "starter", members })).toEqual(["starter", "owner", "editor2"]);
  });

  it("drops a starter who became a viewer or left", () => {
    const demoted = members.map((m) => (m.userId === "starter" ? { ...m, role: "viewer" as const } : m));
    expect(routeApproval({ sessionStarterId: "starter", members: demoted })).toEqual(["owner", "editor2"]);
    expect(routeApproval({ sessionStarterId: "gone", members })).toEqual(["owner", "starter", "editor2"]);
  });

  it("lists each user once", () => {
    const twice = [...members, { userId: "owner", role: "owner" as const }];
    expect(routeApproval({ sessionStarterId: "starter", members: twice })).toEqual(["starter", "owner", "editor2"]);
  });
});

describe("decideApproval", () => {
  it("allow: records who, when and the final input", () => {
    const answer = allowBashCommand(request, "echo edited");
    const decided = decideApproval(pending(), { userId: "owner", role: "owner", answer }, T0 + 1000);
    expect(decided).toMatchObject({
      status: "allowed",
      decidedById: "owner",
      decidedAt: T0 + 1000,
      answer: { behavior: "allow", updatedInput: { command: "echo edited" } },
      input: request.input,
      review: null,
    });
  });

  it("deny: records the message", () => {
    const decided = decideApproval(
      pending(),
      { userId: "starter", role: "editor", answer: denyRequest({ message: "no" }) },
      T0 + 1,
    );
    expect(decided).toMatchObject({
      status: "denied",
      decidedById: "starter",
      answer: { behavior: "deny", message: "no" },
    });
  });

  it("keeps the proposed and approved text of a file review", () => {
    const review = { filePath: "/ws/a.txt", proposed: "model\n", approved: "mine\n" };
    const decided = decideApproval(
      pending(),
      { userId: "owner", role: "owner", answer: allowRequest(request), review },
      T0,
    );
    expect(decided).toMatchObject({ status: "allowed", review });
  });

  it("the first decision wins; a second gets already_decided and changes nothing", () => {
    const first = decideApproval(pending(), { userId: "owner", role: "owner", answer: allowRequest(request) }, T0 + 1);
    const snapshot = structuredClone(first);
    expect(
      errorCode(() => decideApproval(first, { userId: "starter", role: "editor", answer: denyRequest() }, T0 + 2)),
    ).toBe("already_decided");
    expect(first).toEqual(snapshot);
  });

  it("a decision after the deadline gets expired, even before the sweep ran", () => {
    const ap = pending(2);
    expect(
      errorCode(() => decideApproval(ap, { userId: "owner", role: "owner", answer: allowRequest(request) }, T0 + 2000)),
    ).toBe("expired");
    expect(
      decideApproval(ap, { userId: "owner", role: "owner", answer: allowRequest(request) }, T0 + 1999).status,
    ).toBe("allowed");
    const expired = expireApproval(ap, T0 + 2000);
    expect(
      errorCode(() => decideApproval(expired, { userId: "owner", role: "owner", answer: denyRequest() }, T0 + 3000)),
    ).toBe("expired");
  });

  it("viewers are forbidden, even on a pending approval, and nothing changes", () => {
    const ap = pending();
    expect(
      errorCode(() => decideApproval(ap, { userId: "viewer", role: "viewer", answer: allowRequest(request) }, T0)),
    ).toBe("forbidden");
    expect(errorCode(() => decideApproval(ap, { userId: "x", role: null, answer: allowRequest(request) }, T0))).toBe(
      "forbidden",
    );
    expect(ap.status).toBe("pending");
  });

  it("refuses an answer the CLI would not accept", () => {
    const bad = { behavior: "deny", message: "  " } as const;
    expect(errorCode(() => decideApproval(pending(), { userId: "owner", role: "owner", answer: bad }, T0))).toBe(
      "invalid_payload",
    );
  });

  it("a cancelled approval cannot be decided", () => {
    const cancelled = cancelApproval(pending(), "process-exited", T0 + 5);
    expect(
      errorCode(() => decideApproval(cancelled, { userId: "owner", role: "owner", answer: denyRequest() }, T0 + 6)),
    ).toBe("already_decided");
  });
});

describe("expiry", () => {
  it("dueForExpiry lists pending approvals past their deadline, earliest first", () => {
    const a = pending(10, "a");
    const b = pending(5, "b");
    const never = pending(null, "never");
    const decided = decideApproval(pending(1, "d"), { userId: "owner", role: "owner", answer: denyRequest() }, T0);
    const list = [a, b, never, decided];
    expect(dueForExpiry(list, T0 + 4_999)).toEqual([]);
    expect(dueForExpiry(list, T0 + 5_000).map((x) => x.id)).toEqual(["b"]);
    expect(dueForExpiry(list, T0 + 60_000).map((x) => x.id)).toEqual(["b", "a"]);
    expect(nextExpiryAt(list)).toBe(T0 + 5_000);
    expect(nextExpiryAt([never, decided])).toBeNull();
  });

  it("expireApproval answers deny with the expiry message; the record shows expired", () => {
    const expired = expireApproval(pending(120), T0 + 120_000);
    expect(expired).toMatchObject({
      status: "expired",
      decidedAt: T0 + 120_000,
      answer: {
        behavior: "deny",
        message: "This request expired unanswered after 2 minutes; nobody approved it in Conduit.",
      },
    });
    expect(expired.status === "expired" && ZPermissionDecision.safeParse(expired.answer).success).toBe(true);
  });

  it("expireApproval leaves anything not due, never-expiring or settled unchanged", () => {
    const ap = pending(120);
    expect(expireApproval(ap, T0 + 119_999)).toBe(ap);
    const never = pending(null);
    expect(expireApproval(never, T0 + 10 ** 12)).toBe(never);
    const decided = decideApproval(ap, { userId: "owner", role: "owner", answer: allowRequest(request) }, T0);
    expect(expireApproval(decided, T0 + 10 ** 9)).toBe(decided);
  });

  it("remainingMs drives the countdown", () => {
    expect(remainingMs(pending(10), T0 + 4_000)).toBe(6_000);
    expect(remainingMs(pending(10), T0 + 40_000)).toBe(0);
    expect(remainingMs(pending(null), T0)).toBeNull();
  });
});

describe("cancellation", () => {
  it("cancels with a reason the people can read", () => {
    expect(cancelApproval(pending(), "sidecar-restarted", T0 + 9)).toMatchObject({
      status: "cancelled",
      decidedAt: T0 + 9,
      cancelReason: "sidecar-restarted",
      message: expect.stringContaining("server restarted"),
    });
    expect(cancelApproval(pending(), "interrupted", T0)).toMatchObject({
      message: expect.stringContaining("interrupted"),
    });
  });

  it("leaves settled approvals alone", () => {
    const decided = decideApproval(pending(), { userId: "owner", role: "owner", answer: denyRequest() }, T0);
    expect(cancelApproval(decided, "interrupted", T0 + 1)).toBe(decided);
  });

  it("cancels every pending approval of a list at once and says which changed", () => {
    const decided = decideApproval(pending(600, "d"), { userId: "owner", role: "owner", answer: denyRequest() }, T0);
    const list = [pending(600, "a"), decided, pending(null, "b")];
    const { approvals, cancelled } = cancelPendingApprovals(list, "process-exited", T0 + 50);
    expect(approvals.map((a) => a.status)).toEqual(["cancelled", "denied", "cancelled"]);
    expect(cancelled.map((a) => a.id)).toEqual(["a", "b"]);
    expect(approvals[1]).toBe(decided);
  });
});
