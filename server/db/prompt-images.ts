/**
 * Images pasted into prompts: written by the sidecar before the prompt event that names them,
 * read by the web app's image route for the session's members.
 */
import type { Db } from "./client";

export interface NewPromptImage {
  mediaType: string;
  name?: string | undefined;
  data: Uint8Array;
}

export interface StoredPromptImage {
  id: string;
  mediaType: string;
  bytes: number;
  name: string | null;
}

/** Stores a prompt's images in one transaction, in order. */
export async function insertPromptImages(
  db: Db,
  sessionId: string,
  images: readonly NewPromptImage[],
): Promise<StoredPromptImage[]> {
  if (images.length === 0) return [];
  return db.$transaction(
    images.map((image) =>
      db.promptImage.create({
        data: {
          sessionId,
          mediaType: image.mediaType,
          bytes: image.data.byteLength,
          name: image.name ?? null,
          data: new Uint8Array(image.data),
        },
        select: { id: true, mediaType: true, bytes: true, name: true },
      }),
    ),
  );
}

/** One image of one session, with its bytes; undefined when the session has no such image. */
export async function findPromptImage(
  db: Db,
  sessionId: string,
  imageId: string,
): Promise<{ mediaType: string; data: Uint8Array } | undefined> {
  const row = await db.promptImage.findFirst({
    where: { id: imageId, sessionId },
    select: { mediaType: true, data: true },
  });
  return row ?? undefined;
}
