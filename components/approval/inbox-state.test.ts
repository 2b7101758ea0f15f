import { describe, expect, it } from "vitest";
import type { ApprovalView } from "@/server/shared/wire/approval";
import { emptyInbox, orderApprovals, pendingCount, reduceInbox } from "./inbox-state";

function approval(id: string, createdAt: string, status: ApprovalView["status"] = "pending"): ApprovalView {
  return {
    id,
    sessionId: "s1",
    workspace: { id: "w1", slug: "demo", name: "Demo", rootPath: "/srv/demo" },
    sessionTitle: null,
    toolName: "Bash",
    input: { command: "ls" },
    reason: null,
    blockedPath: null,
    subagent: null,
    rememberOptions: [],
    status,
    createdAt,
    expiresAt: null,
    decidedBy: null,
    decidedAt: null,
    message: null,
    finalInput: null,
    review: null,
    plan: null,
  };
}

describe("orderApprovals", () => {
  it("puts pending first, each group newest first", () => {
    const list = [
      approval("old-done", "2026-01-01T00:00:00Z", "allowed"),
      approval("old-pending", "2026-01-01T00:00:01Z"),
      approval("new-done", "2026-01-01T00:00:05Z", "denied"),
      approval("new-pending", "2026-01-01T00:00:04Z"),
    ];
    expect(orderApprovals(list).map((a) => a.id)).toEqual(["new-pending", "old-pending", "new-done", "old-done"]);
  });
});

describe("reduceInbox", () => {
  it("adds requested approvals and moves resolved ones below the pending", () => {
    let s = reduceInbox(emptyInbox, { type: "listed", approvals: [approval("a", "2026-01-01T00:00:00Z")] });
    s = reduceInbox(s, { type: "requested", approval: approval("b", "2026-01-01T00:00:01Z") });
    expect(s.approvals.map((a) => a.id)).toEqual(["b", "a"]);
    expect(pendingCount(s)).toBe(2);

    s = reduceInbox(s, {
      type: "resolved",
      at: "2026-01-01T00:01:00Z",
      resolved: {
        approvalId: "b",
        sessionId: "s1",
        status: "allowed",
        decidedBy: { id: "u2", name: "Bea" },
        message: null,
      },
    });
    expect(s.approvals.map((a) => [a.id, a.status])).toEqual([
      ["a", "pending"],
      ["b", "allowed"],
    ]);
    expect(s.approvals[1]!.decidedBy?.name).toBe("Bea");
    expect(s.approvals[1]!.decidedAt).toBe("2026-01-01T00:01:00Z");
    expect(pendingCount(s)).toBe(1);
  });

  it("does not bring a decided approval back with a replayed request", () => {
    let s = reduceInbox(emptyInbox, { type: "listed", approvals: [approval("a", "2026-01-01T00:00:00Z", "denied")] });
    s = reduceInbox(s, { type: "requested", approval: approval("a", "2026-01-01T00:00:00Z") });
    expect(s.approvals[0]!.status).toBe("denied");
  });

  it("ignores a resolution for an approval it never saw", () => {
    const s = reduceInbox(emptyInbox, {
      type: "resolved",
      at: "2026-01-01T00:00:00Z",
      resolved: { approvalId: "x", sessionId: "s1", status: "expired", decidedBy: null, message: "expired" },
    });
    expect(s).toBe(emptyInbox);
  });

  it("takes the server's count until the next list", () => {
    let s = reduceInbox(emptyInbox, { type: "listed", approvals: [approval("a", "2026-01-01T00:00:00Z")] });
    s = reduceInbox(s, { type: "count", pending: 4 });
    expect(pendingCount(s)).toBe(4);
    s = reduceInbox(s, { type: "listed", approvals: [] });
    expect(pendingCount(s)).toBe(0);
  });
});
