/**
 * The red banner while sessions run without a sandbox. `operator`: CONDUIT_SANDBOX=off, the
 * operator's choice. `fallback`: `auto` found no working bubblewrap, so sessions start only while
 * the instance has a single account (isolation-policy.ts).
 */
export function UnisolatedBanner(props: { reason: "operator" | "fallback" }) {
  return (
    <div
      data-testid="unisolated-banner"
      data-reason={props.reason}
      role="alert"
      className="bg-red-100 px-4 py-2 text-center text-sm text-red-900 dark:bg-red-900/40 dark:text-red-100"
    >
      {props.reason === "operator" ? (
        <>
          The sandbox is turned off by the operator (<code className="font-mono">CONDUIT_SANDBOX=off</code>): every session can read
          the other workspaces and Conduit&apos;s own data.
        </>
      ) : (
        <>
          Sessions are not isolated on this server: bubblewrap (<code className="font-mono">bwrap</code>) does not work here, so
          sessions start only while this server has a single account, and never in a workspace shared with others. The
          administrator&apos;s Admin → Instance page says what to install or change.
        </>
      )}
    </div>
  );
}
