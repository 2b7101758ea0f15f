import { z } from "zod";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { streamSessionEvents } from "@/server/web/sessions";

export const dynamic = "force-dynamic";

const ZQuery = z.object({
  afterSeq: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).optional(),
});

/**
 * The session's event log as NDJSON, one event per line with whole (untrimmed) payloads:
 * the raw tab's download, and the way to read an event the socket sent trimmed. Streamed a
 * page at a time, as fast as the client reads (`streamSessionEvents`).
 */
export async function GET(req: Request, ctx: { params: Promise<{ slug: string; session: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug, session } = await ctx.params;
    const url = new URL(req.url);
    const query = ZQuery.safeParse(Object.fromEntries(url.searchParams));
    if (!query.success) throw new AppError(ErrorCode.invalidPayload, "afterSeq and limit must be whole numbers.");
    const body = await streamSessionEvents(user.id, slug, session, query.data);
    return new Response(body, {
      headers: {
        "content-type": "application/x-ndjson; charset=utf-8",
        "content-disposition": `attachment; filename="session-${session.replace(/[^\w-]/g, "")}.ndjson"`,
        "cache-control": "no-store",
      },
    });
  });
}
