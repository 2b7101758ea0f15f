import { z } from "zod";
import { createAccount } from "@/server/web/accounts";
import { handle, readBody } from "@/server/web/http";

const ZSignup = z.object({
  email: z.string().trim().toLowerCase().pipe(z.email("Enter a valid email address.")),
  password: z.string().max(256, "Use at most 256 characters."),
  name: z.string().trim().max(100).optional(),
});

export async function POST(req: Request) {
  return handle(async () => {
    const input = await readBody(req, ZSignup);
    const user = await createAccount(input);
    return Response.json({ data: user }, { status: 201 });
  });
}
