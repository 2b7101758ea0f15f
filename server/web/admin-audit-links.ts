/**
 * Where an audit row's object is seen, and its name: an approval opens its session, a member
 * change its workspace's page, an account its row in the admin's user list. Pure: the caller
 * looks up names in bulk for a whole page first.
 */
import type { AuditObjectView } from "@/server/shared/wire/admin";

/** An audit row as stored. */
export interface StoredAuditRow {
  objectType: string;
  objectId: string;
  workspaceId: string | null;
  details: string | null;
}

/** Names read for one page of rows. */
export interface AuditLookups {
  workspaces: ReadonlyMap<string, { slug: string; name: string }>;
  sessions: ReadonlyMap<string, { title: string | null; workspaceId: string }>;
  users: ReadonlyMap<string, { email: string }>;
}

/** The `details` JSON as an object ({} when absent or not an object). */
export function parseAuditDetails(details: string | null): Record<string, unknown> {
  if (!details) return {};
  try {
    const value: unknown = JSON.parse(details);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** The session an audit row is about, if any (a session row, or an approval of one). */
export function sessionIdOf(row: StoredAuditRow): string | undefined {
  if (row.objectType === "session") return row.objectId;
  const sessionId = parseAuditDetails(row.details).sessionId;
  return typeof sessionId === "string" ? sessionId : undefined;
}

function sessionHref(sessionId: string, lookups: AuditLookups, workspaceId: string | null): string | null {
  const session = lookups.sessions.get(sessionId);
  const workspace = lookups.workspaces.get(session?.workspaceId ?? workspaceId ?? "");
  return workspace ? `/w/${encodeURIComponent(workspace.slug)}/s/${encodeURIComponent(sessionId)}` : null;
}

function workspaceHref(workspaceId: string | null, lookups: AuditLookups): string | null {
  const workspace = workspaceId ? lookups.workspaces.get(workspaceId) : undefined;
  return workspace ? `/w/${encodeURIComponent(workspace.slug)}` : null;
}

/** The object of `row`: its type, id, a label and a link (null when it cannot be shown). */
export function describeAuditObject(row: StoredAuditRow, lookups: AuditLookups): AuditObjectView {
  const base = { type: row.objectType, id: row.objectId };
  const details = parseAuditDetails(row.details);
  const email =
    lookups.users.get(row.objectId)?.email ?? (typeof details.email === "string" ? details.email : undefined);
  switch (row.objectType) {
    case "approval": {
      const sessionId = sessionIdOf(row);
      const tool = typeof details.toolName === "string" ? details.toolName : "tool request";
      const title = sessionId ? lookups.sessions.get(sessionId)?.title : undefined;
      return {
        ...base,
        label: title ? `${tool} in “${title}”` : tool,
        href: sessionId ? sessionHref(sessionId, lookups, row.workspaceId) : null,
      };
    }
    case "session": {
      const title = lookups.sessions.get(row.objectId)?.title;
      return { ...base, label: title ?? "session", href: sessionHref(row.objectId, lookups, row.workspaceId) };
    }
    case "membership":
      return { ...base, label: `member ${email ?? row.objectId}`, href: workspaceHref(row.workspaceId, lookups) };
    case "workspace":
      return {
        ...base,
        label: lookups.workspaces.get(row.objectId)?.name ?? "workspace",
        href: workspaceHref(row.objectId, lookups),
      };
    case "permissionRule":
      return { ...base, label: "permission rule", href: workspaceHref(row.workspaceId, lookups) };
    case "user":
      return {
        ...base,
        label: email ?? row.objectId,
        href: email ? `/admin/users?q=${encodeURIComponent(email)}` : null,
      };
    case "invitation":
      return { ...base, label: email ? `invitation for ${email}` : "invitation", href: "/admin/invitations" };
    default:
      return { ...base, label: row.objectType, href: workspaceHref(row.workspaceId, lookups) };
  }
}
