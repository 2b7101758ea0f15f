import { describe, expect, it } from "vitest";
import { AppError } from "@/server/shared/errors/app-error";
import { createIsolationGate, isolationPolicyOf, isolationVerdict } from "./isolation-policy";

describe("isolationPolicyOf", () => {
  it("names what the sidecar chose", () => {
    expect(isolationPolicyOf("auto", "bwrap")).toBe("sandboxed");
    expect(isolationPolicyOf("bwrap", "bwrap")).toBe("sandboxed");
    expect(isolationPolicyOf("off", "off")).toBe("operator-off");
    expect(isolationPolicyOf("auto", "off")).toBe("single-tenant");
  });
});

describe("isolationVerdict", () => {
  const alone = { accounts: 1, workspaceMembers: 1 };
  const shared = { accounts: 2, workspaceMembers: 2 };
  const secondAccount = { accounts: 2, workspaceMembers: 1 };

  it("lets every session start under a sandbox, or when the operator turned it off", () => {
    for (const facts of [alone, shared, secondAccount]) {
      expect(isolationVerdict("sandboxed", facts)).toEqual({ allowed: true });
      expect(isolationVerdict("operator-off", facts)).toEqual({ allowed: true });
    }
  });

  it("without a sandbox under auto, serves one tenant only", () => {
    expect(isolationVerdict("single-tenant", alone)).toEqual({ allowed: true });
    expect(isolationVerdict("single-tenant", shared)).toMatchObject({ allowed: false, reason: "shared_workspace", message: expect.stringContaining("members besides its owner") });
    expect(isolationVerdict("single-tenant", secondAccount)).toMatchObject({ allowed: false, reason: "second_account", message: expect.stringContaining("more than one account") });
  });

  it("says what to do, with the diagnosis's fix", () => {
    const verdict = isolationVerdict("single-tenant", secondAccount, "Install it: `apt-get install bubblewrap`");
    expect(verdict).toMatchObject({ allowed: false });
    const message = verdict.allowed ? "" : verdict.message;
    expect(message).toContain("The session was not started");
    expect(message).toContain("apt-get install bubblewrap");
    expect(message).toContain("Admin → Instance");
    expect(message).toContain("CONDUIT_SANDBOX=off");
  });
});

describe("createIsolationGate", () => {
  it("reads nothing while a sandbox is in force or the operator turned it off", async () => {
    for (const policy of ["sandboxed", "operator-off"] as const) {
      const gate = createIsolationGate({ policy, tenancy: () => Promise.reject(new Error("not read")), log: () => undefined });
      await expect(gate("s")).resolves.toBeUndefined();
    }
  });

  it("throws a non-retryable unavailable AppError and logs the reason", async () => {
    const logged: Record<string, unknown>[] = [];
    const gate = createIsolationGate({
      policy: "single-tenant",
      tenancy: async () => ({ accounts: 3, workspaceMembers: 2 }),
      fix: "install bubblewrap",
      log: (fields) => logged.push(fields),
    });
    const refusal = gate("s1");
    await expect(refusal).rejects.toBeInstanceOf(AppError);
    await expect(refusal).rejects.toMatchObject({ code: "unavailable", details: { reason: "isolation", refusal: "shared_workspace", retryable: false } });
    expect(logged).toEqual([{ sessionId: "s1", reason: "shared_workspace", accounts: 3, workspaceMembers: 2 }]);
  });

  it("lets the only account's session start", async () => {
    const gate = createIsolationGate({ policy: "single-tenant", tenancy: async () => ({ accounts: 1, workspaceMembers: 1 }), log: () => undefined });
    await expect(gate("s")).resolves.toBeUndefined();
  });
});
