/**
 * The admin pages' shapes, as `GET /api/admin/*` returns them and `components/admin` draws them.
 * Types and the request schemas; the queries are `server/web/admin-*.ts`.
 */
import { z } from "zod";

/** One account in the admin's user list. */
export interface AdminUserView {
  id: string;
  email: string;
  name: string;
  isAdmin: boolean;
  /** ISO time the account was disabled, null while enabled. */
  disabledAt: string | null;
  lastSignInAt: string | null;
  createdAt: string;
  /** The first few workspaces (name, slug, role) and how many there are in all. */
  workspaces: { name: string; slug: string; role: string }[];
  workspaceCount: number;
  /** USD spent in the current UTC month, across workspaces. */
  monthSpentUsd: number;
  monthlyBudgetUsd: number | null;
}

/** A page of the user list, ordered by email; `nextCursor` is the email to continue after. */
export interface AdminUserPage {
  users: AdminUserView[];
  nextCursor: string | null;
}

/** `PATCH /api/admin/users/<id>`: make or unmake admin, disable or enable (one at a time). */
export const ZAdminUserChange = z.union([
  z.object({ isAdmin: z.boolean() }).strict(),
  z.object({ disabled: z.boolean() }).strict(),
]);
export type AdminUserChange = z.infer<typeof ZAdminUserChange>;

/** Where an audit row's object can be seen, and how to name it. */
export interface AuditObjectView {
  type: string;
  id: string;
  /** A human label: a session title, a member's email, a workspace name. */
  label: string;
  href: string | null;
}

/** One audit log row. */
export interface AuditRowView {
  id: string;
  at: string;
  actor: { id: string; email: string; name: string } | null;
  action: string;
  object: AuditObjectView;
  workspace: { id: string; name: string; slug: string } | null;
  /** The stored details, as JSON text (shown folded). */
  details: string | null;
}

/** A page of the audit log, newest first; `nextCursor` continues after the last row. */
export interface AuditPage {
  rows: AuditRowView[];
  nextCursor: string | null;
}

/** Facts about this Conduit instance for its administrators. */
export interface InstanceView {
  signupPolicy: "invite" | "open" | "closed";
  cli: { version: string | null; path: string | null };
  demoModel: boolean;
  /** `inForce`: what the sidecar reported it runs with (null until it has started once). */
  sandbox: {
    setting: "auto" | "bwrap" | "off";
    bwrapPath: string | null;
    inForce: "bwrap" | "off" | null;
    warning: string | null;
    credentialProxy: boolean | null;
    /** Who may start sessions (server/domain/session/isolation-policy.ts); null until the sidecar reports it. */
    policy: "sandboxed" | "operator-off" | "single-tenant" | null;
    /** Without a sandbox under `auto`: what blocks bubblewrap, the fix, and the probe's stderr. */
    diagnosis: { problem: string; fix: string; detail: string | null } | null;
  };
  /** The per-session caps and which limits hold; null until the sidecar reports them. */
  caps: {
    by: "cgroup" | "rlimit" | "off";
    limits: { memoryMb: number | null; memoryScope: "session" | "process"; processes: number | null; processScope: "session" | "user"; fileSizeMb: number | null } | null;
    reason: string | null;
  } | null;
  database: { kind: "SQLite" | "PostgreSQL"; location: string };
  liveSessions: number;
  memory: { rssBytes: number; heapUsedBytes: number; hostFreeBytes: number; hostTotalBytes: number };
  nodeVersion: string;
  uptimeSec: number;
}
