import { requireCurrentUser } from "@/server/web/auth";
import { readBody } from "@/server/web/http";
import { fileErrorResponse, readFile, readQuery, saveFile, ZReadQuery, ZSaveInput } from "@/server/web/workspace-files";

export const dynamic = "force-dynamic";

type Ctx = { params: Promise<{ slug: string }> };

/** A file's text (or kind, size and version for binary and large files); `versionOnly=1` for polling. */
export async function GET(req: Request, ctx: Ctx) {
  try {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const { path, versionOnly } = readQuery(req, ZReadQuery);
    return Response.json({ data: await readFile(user.id, slug, path, versionOnly !== undefined) }, { headers: { "cache-control": "no-store" } });
  } catch (err) {
    return fileErrorResponse(err);
  }
}

/** Saves `{path, content, baseVersion}`; a changed file answers 409 with its current content. */
export async function PUT(req: Request, ctx: Ctx) {
  try {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const input = await readBody(req, ZSaveInput);
    return Response.json({ data: await saveFile(user.id, slug, input) });
  } catch (err) {
    return fileErrorResponse(err);
  }
}
