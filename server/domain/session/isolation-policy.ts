/**
 * Fail closed without a sandbox (issue 37, item 5). `CONDUIT_SANDBOX=auto` on a host where
 * bubblewrap does not work (Docker's default seccomp profile, Ubuntu 24.04's AppArmor rule on user
 * namespaces, macOS) used to run every session unisolated behind a banner. Now:
 *
 * - `bwrap` in force: every session starts (the sandbox isolates it).
 * - `CONDUIT_SANDBOX=off`: every session starts; the operator chose it (a single-user machine, a
 *   container per tenant), and the banner says so.
 * - `auto` fell back to none: only a single tenant is served. A session is refused in a workspace
 *   with a member besides its owner, and every session is refused once the instance has a second
 *   account: an unisolated session can read every workspace and Conduit's own data.
 *
 * Applied before every spawn (a first start, a resume after an idle stop, a restart), so a second
 * account stops new CLIs from then on; CLIs already running finish as they are. Pure: the facts
 * are read by the caller (`server/db/tenancy.ts`).
 */
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { SandboxStatus } from "@/server/shared/sandbox-status";

type SandboxSetting = SandboxStatus["setting"];
type SandboxMode = SandboxStatus["mode"];

/** How the isolation in force constrains who may start sessions. */
export type IsolationPolicy =
  /** bubblewrap isolates every session. */
  | "sandboxed"
  /** CONDUIT_SANDBOX=off: no isolation, by the operator's choice. */
  | "operator-off"
  /** `auto` found no working sandbox: one tenant only. */
  | "single-tenant";

/** The policy for what the sidecar chose at start. */
export function isolationPolicyOf(setting: SandboxSetting, mode: SandboxMode): IsolationPolicy {
  if (mode === "bwrap") return "sandboxed";
  return setting === "off" ? "operator-off" : "single-tenant";
}

/** What the decision reads about the session's instance and workspace. */
export interface TenancyFacts {
  /** Accounts on the instance (disabled ones included: they can be enabled again). */
  accounts: number;
  /** Members of the session's workspace, its owner(s) included. */
  workspaceMembers: number;
}

/** Why a session may not start. */
export type IsolationRefusal = "shared_workspace" | "second_account";

export type IsolationVerdict = { allowed: true } | { allowed: false; reason: IsolationRefusal; message: string };

/**
 * Whether a session may start a CLI under `policy`. `fix`: what the operator should do (the
 * diagnosis's one line), added to the message.
 */
export function isolationVerdict(policy: IsolationPolicy, facts: TenancyFacts, fix?: string): IsolationVerdict {
  if (policy !== "single-tenant") return { allowed: true };
  const remedy =
    `The session was not started. Ask the operator to make the sandbox work${fix ? ` (${fix})` : ""}; ` +
    "Admin → Instance says what is missing. An operator who accepts unisolated sessions sets CONDUIT_SANDBOX=off.";
  if (facts.workspaceMembers > 1) {
    return {
      allowed: false,
      reason: "shared_workspace",
      message:
        "This workspace has members besides its owner, and Conduit runs without a sandbox on this server " +
        `(CONDUIT_SANDBOX=auto, and bubblewrap does not work here), so one member's session could read everything the others can. ${remedy}`,
    };
  }
  if (facts.accounts > 1) {
    return {
      allowed: false,
      reason: "second_account",
      message:
        "This server has more than one account, and Conduit runs without a sandbox here " +
        `(CONDUIT_SANDBOX=auto, and bubblewrap does not work here), so a session could read other people's workspaces and Conduit's own data. ${remedy}`,
    };
  }
  return { allowed: true };
}

/** Options of {@link createIsolationGate}. */
export interface IsolationGateOptions {
  policy: IsolationPolicy;
  /** The facts of a session's instance and workspace (`readTenancy`). */
  tenancy: (sessionId: string) => Promise<TenancyFacts>;
  /** The diagnosis's fix, for the message. */
  fix?: string;
  /** Where refusals are logged. */
  log: (fields: Record<string, unknown>, message: string) => void;
}

/**
 * The runner's `beforeSpawn`: throws AppError `unavailable` (details.reason `isolation`, not
 * retryable) when the policy refuses; reads nothing while a sandbox is in force or the operator
 * turned it off.
 */
export function createIsolationGate(options: IsolationGateOptions): (sessionId: string) => Promise<void> {
  if (options.policy !== "single-tenant") return async () => undefined;
  return async (sessionId) => {
    const facts = await options.tenancy(sessionId);
    const verdict = isolationVerdict(options.policy, facts, options.fix);
    if (verdict.allowed) return;
    options.log({ sessionId, reason: verdict.reason, ...facts }, "session refused: no sandbox on a shared instance");
    throw new AppError(ErrorCode.unavailable, verdict.message, { reason: "isolation", refusal: verdict.reason, retryable: false });
  };
}
