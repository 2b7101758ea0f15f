import { z } from "zod";
import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { readSettingsReview, trustWorkspaceSettings, untrustWorkspaceSettings } from "@/server/web/workspace-settings";
import { requireWorkspaceAccess } from "@/server/web/workspaces";

export const dynamic = "force-dynamic";

type Ctx = { params: Promise<{ slug: string }> };

const ZTrust = z.object({ digest: z.string().regex(/^[0-9a-f]{64}$/, "digest must be the review's sha256") });

/**
 * What the workspace's own `.claude/settings*.json` and `.mcp.json` would add (allow rules, hooks,
 * MCP servers), and whether an owner trusted them as they are now (`trusted`). Owners only.
 */
export async function GET(_req: Request, ctx: Ctx) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    return Response.json({ data: await readSettingsReview(user.id, slug) });
  });
}

/** Trusts the files as reviewed (`{digest}` from the review); refused when they changed since. */
export async function POST(req: Request, ctx: Ctx) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    // Access before the body: a non-member learns not_found whatever they send.
    await requireWorkspaceAccess(user.id, slug, "manageSettings");
    const { digest } = await readBody(req, ZTrust);
    return Response.json({ data: await trustWorkspaceSettings(user.id, slug, digest) });
  });
}

/** Stops trusting them. */
export async function DELETE(_req: Request, ctx: Ctx) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug } = await ctx.params;
    return Response.json({ data: await untrustWorkspaceSettings(user.id, slug) });
  });
}
