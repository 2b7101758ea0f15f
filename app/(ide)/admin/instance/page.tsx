import type { ReactNode } from "react";
import { requireAdminPage } from "@/server/web/admin";
import { readInstance } from "@/server/web/admin-instance";

export const dynamic = "force-dynamic";

function mb(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MB`;
}

const signupWords = {
  invite: "invite only: admins and workspace owners send invitation links",
  open: "open: anyone who can reach this URL can create an account",
  closed: "closed: no new accounts",
} as const;

function Fact(props: { label: string; testId: string; children: ReactNode }) {
  return (
    <div className="grid grid-cols-3 gap-3 border-t border-zinc-200 py-2 first:border-t-0 dark:border-zinc-800">
      <dt className="text-zinc-500">{props.label}</dt>
      {/* paths and versions break anywhere: a long one must not widen the page on a phone */}
      <dd className="col-span-2 min-w-0 [overflow-wrap:anywhere]" data-testid={props.testId}>
        {props.children}
      </dd>
    </div>
  );
}

/** This instance's configuration and state, for its administrators. */
export default async function AdminInstancePage() {
  await requireAdminPage();
  const i = await readInstance();
  const configured =
    i.sandbox.setting === "off"
      ? "off: turned off by the operator, sessions are not isolated"
      : i.sandbox.bwrapPath
        ? `${i.sandbox.setting}: bubblewrap found at ${i.sandbox.bwrapPath}`
        : i.sandbox.setting === "bwrap"
          ? "bwrap required, but bubblewrap is not installed"
          : "auto: bubblewrap is not installed";
  const inForce =
    i.sandbox.inForce === null
      ? "the sidecar has not reported yet"
      : i.sandbox.inForce === "bwrap"
        ? "in force: every CLI child runs in bubblewrap"
        : `in force: none, sessions are NOT isolated${i.sandbox.warning ? ` (${i.sandbox.warning})` : ""}`;
  const proxy = i.sandbox.credentialProxy === null ? "" : i.sandbox.credentialProxy ? "; the operator's credential stays in the credential proxy" : "";
  const sandbox = `${inForce}${proxy}. Setting ${configured}`;
  // Who may start sessions under the isolation in force (isolation-policy.ts).
  const policy =
    i.sandbox.policy === "single-tenant"
      ? "fail closed: no sandbox, so sessions start only while this instance has a single account, and never in a workspace with members besides its owner"
      : i.sandbox.policy === "operator-off"
        ? "every session starts unisolated: the sandbox is turned off by the operator (CONDUIT_SANDBOX=off)"
        : i.sandbox.policy === "sandboxed"
          ? "every session starts in its sandbox"
          : null;
  // Which limits hold on each session, and over what.
  const capsText =
    i.caps === null
      ? "the sidecar has not reported yet"
      : i.caps.by === "off" || i.caps.limits === null
        ? `none: sessions run uncapped${i.caps.reason ? ` (${i.caps.reason})` : ""}`
        : [
            `by ${i.caps.by === "cgroup" ? "cgroups" : "rlimits (prlimit)"}`,
            i.caps.limits.memoryMb === null ? "no memory cap" : `memory ${i.caps.limits.memoryMb} MB ${i.caps.limits.memoryScope === "session" ? "per session" : "per process"}`,
            i.caps.limits.processes === null
              ? "no process cap"
              : `${i.caps.limits.processes} processes ${i.caps.limits.processScope === "session" ? "per session" : "for the sidecar's whole user on the host"}`,
            i.caps.limits.fileSizeMb === null ? "no file size cap" : `files up to ${i.caps.limits.fileSizeMb} MB`,
          ].join(", ") + (i.caps.reason ? ` (${i.caps.reason})` : "");
  // Per-workspace network narrowing (none, allow-list) lives in the sandbox's network namespace.
  const network =
    i.sandbox.inForce === "bwrap"
      ? "owners can narrow their workspace's network (none, or an allow-list of domains); enforced in the sandbox"
      : i.sandbox.inForce === null
        ? "enforced only once the sidecar reports a sandbox"
        : "cannot be enforced without the sandbox: sessions of workspaces whose owners narrowed the network are refused, never run open";
  return (
    <section className="card text-sm" data-testid="admin-instance">
      <dl>
        <Fact label="Sign-up" testId="instance-signup">
          {signupWords[i.signupPolicy]} <span className="text-zinc-500">(CONDUIT_SIGNUP={i.signupPolicy})</span>
        </Fact>
        <Fact label="Claude Code CLI" testId="instance-cli">
          {i.cli.path
            ? `custom binary at ${i.cli.path}`
            : i.cli.version
              ? `version ${i.cli.version}`
              : "version unknown"}
        </Fact>
        <Fact label="Model" testId="instance-demo">
          {i.demoModel ? "offline demo model (scripted, no API key)" : "Anthropic API"}
        </Fact>
        <Fact label="Sandbox" testId="instance-sandbox">
          {sandbox}
          {policy && <p data-testid="instance-isolation-policy">Sessions: {policy}.</p>}
          {i.sandbox.diagnosis && (
            <div data-testid="instance-sandbox-diagnosis" className="mt-1 rounded bg-red-50 p-2 text-red-900 dark:bg-red-900/30 dark:text-red-100">
              <p>
                <strong>Why:</strong> {i.sandbox.diagnosis.problem}
              </p>
              <p>
                <strong>Fix:</strong> {i.sandbox.diagnosis.fix}
              </p>
              {i.sandbox.diagnosis.detail && (
                <pre className="mt-1 whitespace-pre-wrap font-mono text-xs" data-testid="instance-sandbox-probe">
                  {i.sandbox.diagnosis.detail}
                </pre>
              )}
            </div>
          )}
        </Fact>
        <Fact label="Session caps" testId="instance-caps">
          {capsText}
        </Fact>
        <Fact label="Network narrowing" testId="instance-network">
          {network}
        </Fact>
        <Fact label="Database" testId="instance-database">
          {i.database.kind} <span className="font-mono text-xs text-zinc-500">{i.database.location}</span>
        </Fact>
        <Fact label="Live sessions" testId="instance-live-sessions">
          {i.liveSessions}
        </Fact>
        <Fact label="Memory" testId="instance-memory">
          web process {mb(i.memory.rssBytes)} (heap {mb(i.memory.heapUsedBytes)}); host {mb(i.memory.hostFreeBytes)}{" "}
          free of {mb(i.memory.hostTotalBytes)}
        </Fact>
        <Fact label="Runtime" testId="instance-runtime">
          Node {i.nodeVersion}, web process up {Math.round(i.uptimeSec / 60)} min
        </Fact>
      </dl>
    </section>
  );
}
