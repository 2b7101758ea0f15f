import { describe, expect, it } from "vitest";
import type { PushPayload, PushSettings } from "@/server/domain/push/push-payload";
import { ApprovalFact } from "@/server/shared/wire/approval";
import type { WireEvent } from "@/server/shared/wire/session";
import { attachTurnPushes, notifyWithPush } from "./push-notifier";

interface Sent {
  userIds: readonly string[];
  payload: PushPayload;
  wants: (s: PushSettings) => boolean;
}

function recordingSender() {
  const sent: Sent[] = [];
  return {
    sent,
    sender: {
      sendToUsers: async (userIds: readonly string[], payload: PushPayload, wants: (s: PushSettings) => boolean) => {
        sent.push({ userIds, payload, wants });
        return { sent: 1, gone: 0, failed: 0 };
      },
    },
  };
}

const on: PushSettings = { approvals: true, finishedTurns: true };

describe("notifyWithPush", () => {
  it("pushes approval:requested to its recipients if they want approvals, and still tells their sockets", () => {
    const told: string[] = [];
    const { sent, sender } = recordingSender();
    const notify = notifyWithPush((ids, event) => told.push(`${event}:${ids.join(",")}`), sender);
    const view = { id: "a1", sessionId: "s1", toolName: "Bash", input: { command: "ls" }, sessionTitle: null, workspace: { id: "w", slug: "w", name: "W" } };
    notify(["u1", "u2"], ApprovalFact.requested, view);
    notify(["u1"], ApprovalFact.resolved, view);
    expect(told).toEqual([`${ApprovalFact.requested}:u1,u2`, `${ApprovalFact.resolved}:u1`]);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.userIds).toEqual(["u1", "u2"]);
    expect(sent[0]!.payload).toMatchObject({ kind: "approval", body: "Bash: ls", url: "/w/w/s/s1" });
    expect(sent[0]!.wants({ ...on, approvals: false })).toBe(false);
    expect(sent[0]!.wants(on)).toBe(true);
  });
});

describe("attachTurnPushes", () => {
  function rig(watchers: string[]) {
    let listener: (e: WireEvent) => void = () => undefined;
    const { sent, sender } = recordingSender();
    const detach = attachTurnPushes({
      hub: { onDidEmitEvent: (l) => ((listener = l), () => undefined) },
      io: { in: () => ({ fetchSockets: async () => watchers.map((id) => ({ data: { user: { id } } })) }) } as never,
      db: { session: { findUnique: async () => ({ title: "Fix", workspace: { slug: "web", name: "Web" } }) } } as never,
      sender,
    });
    const emit = (e: Partial<WireEvent>) => listener({ sessionId: "s1", seq: 1, trimmed: false, at: "", payload: null, kind: "cli", ...e });
    return { sent, emit, detach };
  }
  const settle = () => new Promise((r) => setTimeout(r, 10));

  it("pushes the result to the prompt's sender when they have no socket on the session", async () => {
    const { sent, emit } = rig(["someone-else"]);
    emit({ kind: "prompt", user: { id: "ada", name: "Ada" } });
    emit({ kind: "cli", payload: { type: "assistant" } });
    emit({ kind: "cli", payload: { type: "result", is_error: false, result: "Done: 3 files changed." } });
    await settle();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.userIds).toEqual(["ada"]);
    expect(sent[0]!.payload).toEqual({ kind: "turn-finished", title: "Turn finished in Web · Fix", body: "Done: 3 files changed.", url: "/w/web/s/s1", tag: "turn:s1" });
    expect(sent[0]!.wants({ ...on, finishedTurns: false })).toBe(false);
    // one push per turn: a second result without a new prompt says nothing
    emit({ kind: "cli", payload: { type: "result", is_error: false } });
    await settle();
    expect(sent).toHaveLength(1);
  });

  it("stays quiet while the sender watches the session", async () => {
    const { sent, emit } = rig(["ada"]);
    emit({ kind: "prompt", user: { id: "ada", name: "Ada" } });
    emit({ kind: "cli", payload: { type: "result", is_error: true } });
    await settle();
    expect(sent).toHaveLength(0);
  });
});
