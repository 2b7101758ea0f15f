import { describe, expect, it } from "vitest";
import { AppError } from "@/server/shared/errors/app-error";
import { admissionRefusalOf, createAdmission, pickReclaimVictim, readAvailableMemory, type ReclaimCandidate, type SlotOwner } from "./admission";

const MB = 1024 * 1024;

describe("createAdmission", () => {
  it("admits up to the cap, and again once a slot is released", () => {
    const admission = createAdmission({ maxLive: 2, minFreeBytes: 0, freeMemory: () => 1e12 });
    const a = admission.admit("a");
    admission.admit("b");
    expect(() => admission.admit("c")).toThrow(AppError);
    expect(() => admission.admit("c")).toThrow(/already running 2 Claude sessions/);
    // a session holding a slot is not counted twice
    expect(() => admission.admit("a")).not.toThrow();
    a.release();
    a.release();
    expect(admission.liveCount).toBe(1);
    expect(() => admission.admit("c")).not.toThrow();
  });

  it("refuses by free memory with a retryable, explained error", () => {
    let free = 300 * MB;
    const admission = createAdmission({ maxLive: 10, minFreeBytes: 400 * MB, freeMemory: () => free });
    let refusal: unknown;
    try {
      admission.admit("a");
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({
      code: "unavailable",
      message:
        "The server has 300 MB of memory available and needs 400 MB to start another Claude session. Try again in a minute.",
      details: { reason: "low_memory", retryable: true },
    });
    free = 500 * MB;
    expect(() => admission.admit("a")).not.toThrow();
  });

  it("caps one person: 21 sessions of one user fill their share, another user's session is still admitted", () => {
    const owners = new Map<string, SlotOwner>();
    const admission = createAdmission({ maxLive: 20, maxPerUser: 5, maxPerWorkspace: 10, minFreeBytes: 0, freeMemory: () => 1e12, ownerOf: (id) => owners.get(id) });
    const refusals: unknown[] = [];
    for (let i = 0; i < 21; i++) {
      owners.set(`ann-${i}`, { userId: "ann", workspaceId: `w-ann-${i % 3}` });
      try {
        admission.admit(`ann-${i}`);
      } catch (error) {
        refusals.push(error);
      }
    }
    expect(admission.liveCount).toBe(5);
    expect(refusals).toHaveLength(16);
    expect(refusals[0]).toMatchObject({
      code: "unavailable",
      message: expect.stringMatching(/^You already have 5 Claude sessions running, the most one person may run at once/),
      details: { reason: "user_limit", live: 5, max: 5, retryable: true },
    });
    expect(admissionRefusalOf(refusals[0])).toBe("user_limit");
    owners.set("bob-1", { userId: "bob", workspaceId: "w-bob" });
    expect(() => admission.admit("bob-1")).not.toThrow();
    expect(admission.liveCount).toBe(6);
  });

  it("caps one workspace, whoever's sessions they are", () => {
    const owners = new Map<string, SlotOwner>([
      ["a", { userId: "ann", workspaceId: "w" }],
      ["b", { userId: "bob", workspaceId: "w" }],
      ["c", { userId: "cat", workspaceId: "w" }],
      ["d", { userId: "cat", workspaceId: "other" }],
    ]);
    const admission = createAdmission({ maxLive: 20, maxPerUser: 5, maxPerWorkspace: 2, minFreeBytes: 0, freeMemory: () => 1e12, ownerOf: (id) => owners.get(id) });
    admission.admit("a");
    admission.admit("b");
    expect(() => admission.admit("c")).toThrow(/This workspace already has 2 Claude sessions running/);
    expect(() => admission.admit("d")).not.toThrow();
  });

  it("counts a session without a known owner against the server's cap only", () => {
    const admission = createAdmission({ maxLive: 2, maxPerUser: 1, minFreeBytes: 0, freeMemory: () => 1e12, ownerOf: () => undefined });
    admission.admit("x");
    admission.admit("y");
    expect(() => admission.admit("z")).toThrow(/already running 2 Claude sessions/);
  });

  it("reads available memory from the system", () => {
    expect(readAvailableMemory()).toBeGreaterThan(0);
  });
});

describe("pickReclaimVictim", () => {
  const cullMs = 1_800_000;
  const now = 10_000_000;
  const c = (sessionId: string, userId: string, workspaceId: string, idleForMs: number, idle = true): ReclaimCandidate => ({
    sessionId,
    owner: { userId, workspaceId },
    idle,
    lastActivityAt: now - idleForMs,
  });
  const ann = { userId: "ann", workspaceId: "w1" };

  it("never takes another tenant's CLI that only rests between prompts", () => {
    const others = [c("bob-1", "bob", "w2", 60_000), c("bob-2", "bob", "w2", 600_000)];
    expect(pickReclaimVictim(others, { sessionId: "ann-new", owner: ann }, "session_limit", now, cullMs)).toBeUndefined();
  });

  it("takes the asking person's own idle session first, the one idle longest", () => {
    const list = [c("bob-1", "bob", "w2", 600_000), c("ann-1", "ann", "w1", 60_000), c("ann-2", "ann", "w3", 120_000), c("ann-busy", "ann", "w1", 900_000, false)];
    expect(pickReclaimVictim(list, { sessionId: "ann-new", owner: ann }, "session_limit", now, cullMs)?.sessionId).toBe("ann-2");
  });

  it("takes anyone's session idle past the cull time (a viewer kept it warm)", () => {
    const list = [c("bob-1", "bob", "w2", cullMs + 1), c("bob-2", "bob", "w2", 60_000)];
    expect(pickReclaimVictim(list, { sessionId: "ann-new", owner: ann }, "session_limit", now, cullMs)?.sessionId).toBe("bob-1");
    expect(pickReclaimVictim(list, { sessionId: "ann-new", owner: ann }, "low_memory", now, cullMs)?.sessionId).toBe("bob-1");
    // a cull time of 0 (never culled) makes nobody's session stale
    expect(pickReclaimVictim(list, { sessionId: "ann-new", owner: ann }, "session_limit", now, 0)).toBeUndefined();
  });

  it("frees the cap that refused: a person at their cap gets only their own; a full workspace only that workspace's", () => {
    const list = [c("bob-stale", "bob", "w1", cullMs * 2), c("ann-w3", "ann", "w3", 60_000)];
    expect(pickReclaimVictim(list, { sessionId: "ann-new", owner: ann }, "user_limit", now, cullMs)?.sessionId).toBe("ann-w3");
    expect(pickReclaimVictim(list, { sessionId: "ann-new", owner: ann }, "workspace_limit", now, cullMs)?.sessionId).toBe("bob-stale");
    expect(pickReclaimVictim([c("ann-w3", "ann", "w3", 60_000)], { sessionId: "ann-new", owner: ann }, "workspace_limit", now, cullMs)).toBeUndefined();
  });

  it("never picks the asking session itself, nor a busy one", () => {
    const list = [c("ann-new", "ann", "w1", 600_000), c("ann-1", "ann", "w1", 600_000, false)];
    expect(pickReclaimVictim(list, { sessionId: "ann-new", owner: ann }, "session_limit", now, cullMs)).toBeUndefined();
  });
});
