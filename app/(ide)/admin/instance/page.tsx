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
      <dd className="col-span-2" data-testid={props.testId}>
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
      ? "off: sessions are not isolated"
      : i.sandbox.bwrapPath
        ? `${i.sandbox.setting}: bubblewrap found at ${i.sandbox.bwrapPath}`
        : i.sandbox.setting === "bwrap"
          ? "bwrap required, but bubblewrap is not installed"
          : "auto: bubblewrap is not installed, so sessions are not isolated";
  const inForce =
    i.sandbox.inForce === null
      ? "the sidecar has not reported yet"
      : i.sandbox.inForce === "bwrap"
        ? "in force: every CLI child runs in bubblewrap"
        : `in force: none, sessions are NOT isolated${i.sandbox.warning ? ` (${i.sandbox.warning})` : ""}`;
  const proxy = i.sandbox.credentialProxy === null ? "" : i.sandbox.credentialProxy ? "; the operator's credential stays in the credential proxy" : "";
  const sandbox = `${inForce}${proxy}. Setting ${configured}`;
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
