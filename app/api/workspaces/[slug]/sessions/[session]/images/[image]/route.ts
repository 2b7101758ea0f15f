import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { readPromptImage } from "@/server/web/prompt-images";

export const dynamic = "force-dynamic";

/**
 * An image pasted into one of the session's prompts, for members. Served with its stored type
 * only (PNG, JPEG, GIF, WebP: checked by signature when it came in), never sniffed, never as a
 * page: `nosniff` and a sandboxing CSP keep a crafted file from running anything.
 */
export async function GET(_req: Request, ctx: { params: Promise<{ slug: string; session: string; image: string }> }) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const { slug, session, image } = await ctx.params;
    const found = await readPromptImage(user.id, slug, session, image);
    return new Response(new Uint8Array(found.data), {
      headers: {
        "content-type": found.mediaType,
        "content-length": String(found.data.byteLength),
        "x-content-type-options": "nosniff",
        "content-security-policy": "default-src 'none'; sandbox",
        // private: the bytes never change, but only members may have them
        "cache-control": "private, max-age=86400, immutable",
      },
    });
  });
}
