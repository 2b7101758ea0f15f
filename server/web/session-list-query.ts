/**
 * The workspace session list's query (issue 13 item 4): filters by status, archived, creator and
 * text, paged by a cursor on (createdAt, id) instead of a silent cap. Parsed with zod at the
 * route; turned into one Prisma `where` here (deleted sessions never match).
 */
import { z } from "zod";
import type { Prisma } from "@/generated/prisma/client";
import { decodeHistoryCursor } from "@/server/db/session-history";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { endedSessionStatuses, liveSessionStatuses, sessionStatuses } from "@/server/shared/wire/session";

export const sessionListPageSize = 50;
export const maxSessionListPage = 200;

const statusFilters = ["live", "ended", ...sessionStatuses] as const;

const statusGroups: Record<string, string[]> = {
  live: [...liveSessionStatuses],
  ended: [...endedSessionStatuses],
};

export const ZSessionListQuery = z.object({
  status: z.enum(statusFilters).optional(),
  /** `active` (the default) leaves archived sessions out; `archived` shows only them; `all` both. */
  archived: z.enum(["active", "archived", "all"]).default("active"),
  creator: z.string().min(1).max(64).optional(),
  q: z.string().trim().max(200).optional(),
  cursor: z.string().min(1).max(300).optional(),
  limit: z.coerce.number().int().min(1).max(maxSessionListPage).default(sessionListPageSize),
});
export type SessionListQuery = z.infer<typeof ZSessionListQuery>;

/** Reads the query from URL search params; a bad value is `invalid_payload` naming the field. */
export function parseSessionListQuery(params: URLSearchParams): SessionListQuery {
  const raw: Record<string, string> = {};
  for (const key of ["status", "archived", "creator", "q", "cursor", "limit"]) {
    const value = params.get(key);
    if (value !== null && value !== "") raw[key] = value;
  }
  const parsed = ZSessionListQuery.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AppError(
      ErrorCode.invalidPayload,
      `Invalid session list filter ${String(issue?.path[0] ?? "")}: ${issue?.message ?? "not understood"}.`,
    );
  }
  if (parsed.data.cursor !== undefined && !decodeHistoryCursor(parsed.data.cursor))
    throw new AppError(ErrorCode.invalidPayload, "Invalid session list cursor: start again from the first page.");
  return parsed.data;
}

/** The rows of `workspaceId` the query selects, deleted ones never. */
export function sessionListWhere(workspaceId: string, query: Partial<SessionListQuery>): Prisma.SessionWhereInput {
  const and: Prisma.SessionWhereInput[] = [{ workspaceId }, { deletedAt: null }];
  const archived = query.archived ?? "active";
  if (archived === "active") and.push({ archivedAt: null });
  else if (archived === "archived") and.push({ archivedAt: { not: null } });
  if (query.status) and.push({ status: { in: statusGroups[query.status] ?? [query.status] } });
  if (query.creator) and.push({ createdById: query.creator });
  const words = (query.q ?? "").split(/\s+/).filter(Boolean).slice(0, 8);
  for (const word of words) {
    // searchText is lower-cased by the sidecar; titles are matched as typed and lower-cased
    and.push({
      OR: [
        { searchText: { contains: word.toLowerCase() } },
        { title: { contains: word } },
        { title: { contains: word.toLowerCase() } },
      ],
    });
  }
  const after = query.cursor ? decodeHistoryCursor(query.cursor) : undefined;
  if (after)
    and.push({ OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] });
  return { AND: and };
}
