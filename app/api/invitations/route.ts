import { z } from "zod";
import { maxInvitationDays, minInvitationDays } from "@/server/domain/account/invitation";
import { requireCurrentUser } from "@/server/web/auth";
import { handle, readBody } from "@/server/web/http";
import { createInvitation, listInvitations } from "@/server/web/invitations";

export const dynamic = "force-dynamic";

const ZCreate = z.object({
  email: z.string().trim().toLowerCase().pipe(z.email("Enter a valid email address.")),
  workspaceSlug: z.string().min(1).max(100).nullable(),
  role: z.enum(["owner", "editor", "viewer"], "Role must be owner, editor or viewer.").optional(),
  expiresInDays: z.number().int().min(minInvitationDays).max(maxInvitationDays, `An invitation lasts ${minInvitationDays} to ${maxInvitationDays} days.`).optional(),
});

/** `?workspace=<slug>`: that workspace's invitations (owners, admins); none: all (admins). */
export async function GET(req: Request) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const slug = new URL(req.url).searchParams.get("workspace") ?? undefined;
    return Response.json({ data: await listInvitations(user, { workspaceSlug: slug }) });
  });
}

export async function POST(req: Request) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const input = await readBody(req, ZCreate);
    return Response.json({ data: await createInvitation(user, input) }, { status: 201 });
  });
}
