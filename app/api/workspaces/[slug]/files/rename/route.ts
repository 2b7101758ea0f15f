import { requireCurrentUser } from "@/server/web/auth";
import { readBody } from "@/server/web/http";
import { fileErrorResponse, renameFile, ZRenameInput } from "@/server/web/workspace-files";

export const dynamic = "force-dynamic";

/** Renames or moves a file or folder inside the workspace: `{from, to}`. */
export async function POST(req: Request, ctx: { params: Promise<{ slug: string }> }) {
  try {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const input = await readBody(req, ZRenameInput);
    return Response.json({ data: await renameFile(user.id, slug, input) });
  } catch (err) {
    return fileErrorResponse(err);
  }
}
