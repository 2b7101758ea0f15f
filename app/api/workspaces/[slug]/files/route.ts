import { requireCurrentUser } from "@/server/web/auth";
import { readBody } from "@/server/web/http";
import { createFile, deleteFile, fileErrorResponse, listFiles, readQuery, ZCreateInput, ZDeleteQuery, ZListQuery } from "@/server/web/workspace-files";

export const dynamic = "force-dynamic";

type Ctx = { params: Promise<{ slug: string }> };

/** One folder of the workspace (`?path=`, the root when absent). */
export async function GET(req: Request, ctx: Ctx) {
  try {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const { path } = readQuery(req, ZListQuery);
    return Response.json({ data: await listFiles(user.id, slug, path) });
  } catch (err) {
    return fileErrorResponse(err);
  }
}

/** Creates a file or folder: `{path, kind, content?}`. */
export async function POST(req: Request, ctx: Ctx) {
  try {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const input = await readBody(req, ZCreateInput);
    return Response.json({ data: await createFile(user.id, slug, input) }, { status: 201 });
  } catch (err) {
    return fileErrorResponse(err);
  }
}

/** Deletes a file or folder (`?path=`), never the root. */
export async function DELETE(req: Request, ctx: Ctx) {
  try {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const { path } = readQuery(req, ZDeleteQuery);
    return Response.json({ data: await deleteFile(user.id, slug, path) });
  } catch (err) {
    return fileErrorResponse(err);
  }
}
