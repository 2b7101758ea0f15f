// Fail closed without a sandbox (isolation-policy.ts) through the hub and a real runner: under
// CONDUIT_SANDBOX=auto with no working bubblewrap (the sandbox choice injected: none), a session in
// a workspace with other members is refused before anything is spawned, with the reason at the
// session; with CONDUIT_SANDBOX=off (the operator's choice) the same session starts.
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readTenancy } from "@/server/db/tenancy";
import { createIsolationGate, isolationPolicyOf } from "@/server/domain/session/isolation-policy";
import { chooseSandbox } from "@/server/sidecar/process/sandbox";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { fakeCliScript } from "@/test/fake-cli/runner-kit";
import { until } from "@/test/until";
import { SessionHub } from "./session-hub";
import { createSessionRunner } from "./session-runner";

const log = pino({ level: "silent" });
let fx: SessionFixtures;
let hub: SessionHub | undefined;
/** CLI children spawned, as the sessions' logs say. */
const spawned = () => fx.db.sessionEvent.count({ where: { kind: "process", payload: { contains: '"phase":"spawned"' } } });

beforeEach(async () => {
  fx = await createSessionFixtures();
});
afterEach(async () => {
  await hub?.close();
  hub = undefined;
  await fx.close();
});

/** A hub whose runners ask the isolation gate of `setting`, with bubblewrap missing. */
async function hubFor(setting: "auto" | "off"): Promise<{ hub: SessionHub; refusals: Record<string, unknown>[] }> {
  const choice = await chooseSandbox(setting, process.execPath, { findBwrap: () => undefined });
  expect(choice.sandbox.mode).toBe("off");
  const refusals: Record<string, unknown>[] = [];
  const gate = createIsolationGate({
    policy: isolationPolicyOf(setting, choice.sandbox.mode),
    tenancy: (sessionId) => readTenancy(fx.db, sessionId),
    fix: "Install it: `apt-get install bubblewrap`",
    log: (fields) => refusals.push(fields),
  });
  const made = new SessionHub({
    db: fx.db,
    createRunner: (options, decidePermission) =>
      createSessionRunner(options, {
        cliPath: process.execPath,
        argsPrefix: [fakeCliScript, "--fake-mode", "behave"],
        decidePermission,
        sandbox: choice.sandbox,
        beforeSpawn: gate,
      }),
    configRoot: path.join(fx.dataDir, "claude-config"),
    sidecarId: "isolation-it",
    log,
  });
  hub = made;
  return { hub: made, refusals };
}

describe("a spawn under auto without a sandbox", () => {
  it("is refused in a workspace with other members, with the reason and the fix, and nothing spawned", async () => {
    const { hub, refusals } = await hubFor("auto");
    const creating = hub.createSession(fx.owner, { workspace: fx.workspace, role: "owner" }, { mode: "default", commandId: "c1" });
    await expect(creating).rejects.toMatchObject({
      code: "unavailable",
      message: expect.stringContaining("This workspace has members besides its owner"),
      details: { reason: "isolation", refusal: "shared_workspace" },
    });
    await expect(creating).rejects.toMatchObject({ message: expect.stringContaining("apt-get install bubblewrap") });
    expect(await spawned()).toBe(0);
    expect(refusals).toMatchObject([{ reason: "shared_workspace", accounts: 4, workspaceMembers: 3 }]);
  });

  it("is refused once the instance has a second account, even in a workspace of one", async () => {
    await fx.db.membership.deleteMany({ where: { workspaceId: fx.workspace.id, userId: { not: fx.owner.id } } });
    const { hub } = await hubFor("auto");
    await expect(hub.createSession(fx.owner, { workspace: fx.workspace, role: "owner" }, { mode: "default", commandId: "c2" })).rejects.toMatchObject({
      details: { refusal: "second_account" },
      message: expect.stringContaining("more than one account"),
    });
    expect(await spawned()).toBe(0);
  });

  it("starts the only account's session", async () => {
    await fx.db.membership.deleteMany({ where: { workspaceId: fx.workspace.id, userId: { not: fx.owner.id } } });
    await fx.db.user.deleteMany({ where: { id: { not: fx.owner.id } } });
    const { hub } = await hubFor("auto");
    const view = await hub.createSession(fx.owner, { workspace: fx.workspace, role: "owner" }, { mode: "default", commandId: "c3" });
    await until(async () => (await hub.view(view.id)).status === "idle", 20_000, "the session idle");
    await until(async () => (await spawned()) === 1, 10_000, "one spawn logged");
  });
});

describe("CONDUIT_SANDBOX=off, the operator's choice", () => {
  it("starts a session in a shared workspace", async () => {
    const { hub, refusals } = await hubFor("off");
    const view = await hub.createSession(fx.owner, { workspace: fx.workspace, role: "owner" }, { mode: "default", commandId: "c4" });
    await until(async () => (await hub.view(view.id)).status === "idle", 20_000, "the session idle");
    await until(async () => (await spawned()) === 1, 10_000, "one spawn logged");
    expect(refusals).toEqual([]);
  });
});
