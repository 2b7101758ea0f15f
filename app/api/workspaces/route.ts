import { z } from "zod";
import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { createWorkspace, listWorkspaces } from "@/server/web/workspaces";

export const dynamic = "force-dynamic";

const ZCreateWorkspace = z.object({
  name: z.string().trim().min(1, "Give the workspace a name.").max(80, "Use at most 80 characters."),
  directory: z.string().trim().max(200).optional(),
});

export async function GET() {
  return handle(async () => {
    const user = await requireCurrentUser();
    return Response.json({ data: await listWorkspaces(user.id) });
  });
}

export async function POST(req: Request) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const input = await readBody(req, ZCreateWorkspace);
    return Response.json({ data: await createWorkspace(user.id, input) }, { status: 201 });
  });
}
