import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { reviewWorkspaceSettingsAt } from "@/server/web/workspace-settings";
import { requireWorkspaceAccess } from "@/server/web/workspaces";

export const dynamic = "force-dynamic";

/**
 * What the workspace's own `.claude/settings*.json` and `.mcp.json` would add (allow rules, hooks,
 * MCP servers) if an owner trusted them. Sessions run without them until then (`trusted: false`).
 */
export async function GET(_req: Request, ctx: { params: Promise<{ slug: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    const ws = await requireWorkspaceAccess(user.id, slug, "manageSettings");
    const review = await reviewWorkspaceSettingsAt(ws.rootPath);
    return Response.json({ data: { ...review, trusted: false } });
  });
}
