/**
 * Every probe the security specs record (the `probe` of each ledger line), by spec file, with the
 * fewest attempts a full run records for it. `npm run test:security` compares the ledger with
 * this list after the run: a listed probe with fewer attempts (a spec, a test or a loop that
 * stopped running) or a probe that is not listed fails the run (`missing_probes=<n>`). Add a
 * probe here when a spec records a new one; a count is the size of the probe's loop.
 */
export const expectedProbes: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  "network-policy.spec.ts": {
    "network/none-loopback": 1,
    "network/allowlist": 5,
    "network/open-loopback": 3,
  },
  "protocol-attacks.spec.ts": {
    "protocol/S1-origin-edge": 4,
    "protocol/S1-origin-sidecar": 2,
    "protocol/S3-cross-site": 4,
    // 10 events × 9 malformed payloads
    "protocol/S9-malformed": 90,
    "protocol/S10-command-flood": 1,
    "protocol/S10-big-frame": 1,
    "protocol/S2-removed-member": 1,
    "protocol/S2-signed-out": 1,
  },
  "reach.spec.ts": {
    // the web app, the sidecar and the model server (port and /metrics each), PostgreSQL, Redis, the metadata address
    "reach/through-proxy": 9,
    "reach/around-proxy": 9,
    // every refused method and path of the credential proxy
    "reach/credential-proxy": 7,
    "reach/edge-host": 4,
  },
  "session-attacks.spec.ts": {
    "session/S8-data-dir": 5,
    "session/S8-other-workspaces": 5,
    "session/S7-credential": 4,
    "session/A10-outlive": 1,
    // the corpus of workspace directories
    "session/S5-workspace-dir": 14,
    "session/S8-repo-settings": 2,
    "session/S6-prompt-injection": 1,
  },
  "tenant-matrix.spec.ts": {
    // every denied cell of the route matrix
    "matrix/routes": 219,
    "matrix/socket-no-cookie": 1,
    // every denied cell of the socket command matrix
    "matrix/socket-commands": 41,
  },
  "workspace-door.spec.ts": {
    "door/hostile.worktree-create": 1,
    "door/hostile.status": 1,
    "door/hostile.diff": 1,
    "door/hostile.discard": 1,
    "door/hostile.commit": 1,
    "door/hostile.changes": 1,
    "door/hostile.worktree": 1,
    "door/hostile.merge": 1,
    "door/hostile.worktree-delete": 1,
    "door/hostile.no-marker": 1,
    "door/git-links.routes": 1,
    "door/git-links.head": 1,
    "door/git-links.heads-dir": 1,
    "door/git-links.outside-unchanged": 1,
    "door/borrowed.alternates": 1,
    "door/borrowed.gitfile": 1,
    "door/borrowed.git-symlink": 1,
    "door/borrowed.commondir": 1,
    "door/borrowed.victim-unchanged": 1,
    "door/swap.files-list": 1,
    "door/swap.files-search": 1,
    "door/swap.files-read": 1,
    "door/swap.files-version": 1,
    "door/swap.files-save": 1,
    "door/swap.files-create": 1,
    "door/swap.files-rename": 1,
    "door/swap.files-delete": 1,
    "door/swap.changes": 1,
    "door/swap.changes-file": 1,
    "door/swap.revert": 1,
    "door/swap.rewind-preview": 1,
    "door/swap.rewind": 1,
    "door/swap.approval-card": 1,
    "door/swap.outside-unchanged": 1,
    "door/config.outside-unchanged": 1,
    "door/config.outside-bytes": 1,
  },
};
