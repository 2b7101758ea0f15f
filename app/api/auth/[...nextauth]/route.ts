import NextAuth from "next-auth";
import { authOptions } from "@/server/web/auth";

export const dynamic = "force-dynamic";

type Handler = (req: Request, ctx: { params: Promise<{ nextauth: string[] }> }) => Promise<Response>;

// next-auth v4 reads `ctx.params` synchronously; Next 16 hands a promise, so await it first.
const route: Handler = async (req, ctx) => {
  const params = await ctx.params;
  const handler = NextAuth(authOptions()) as (req: Request, ctx: { params: { nextauth: string[] } }) => Promise<Response>;
  return handler(req, { params });
};

export { route as GET, route as POST };
