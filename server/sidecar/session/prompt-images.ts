/**
 * A prompt's images on their way in: decoded, checked to be what they claim (the file's own
 * signature, so a renamed file is refused here with a clear message rather than by the API
 * mid-turn), and stored before the prompt event that names them.
 */
import type { Db } from "@/server/db/client";
import { insertPromptImages } from "@/server/db/prompt-images";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { PromptImage, PromptImageRef, PromptImageType } from "@/server/shared/wire/session-controls";

const labels: Record<PromptImageType, string> = {
  "image/png": "PNG",
  "image/jpeg": "JPEG",
  "image/gif": "GIF",
  "image/webp": "WebP",
};

/** The image type a file's first bytes announce, if it is one the API takes. */
export function sniffImageType(bytes: Uint8Array): PromptImageType | undefined {
  const at = (i: number) => bytes[i];
  if (at(0) === 0x89 && at(1) === 0x50 && at(2) === 0x4e && at(3) === 0x47) return "image/png";
  if (at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return "image/jpeg";
  if (at(0) === 0x47 && at(1) === 0x49 && at(2) === 0x46 && at(3) === 0x38) return "image/gif";
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes.length >= 12 && ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "image/webp";
  return undefined;
}

/** Decodes and checks every image; throws `invalid_payload` naming the first bad one. */
export function decodePromptImages(images: readonly PromptImage[]): Uint8Array[] {
  return images.map((image, i) => {
    const bytes = new Uint8Array(Buffer.from(image.data, "base64"));
    const actual = sniffImageType(bytes);
    const which = image.name ? `"${image.name}"` : `Image ${i + 1}`;
    if (actual === undefined) {
      throw new AppError(ErrorCode.invalidPayload, `${which} is not a PNG, JPEG, GIF or WebP image.`);
    }
    if (actual !== image.mediaType) {
      throw new AppError(
        ErrorCode.invalidPayload,
        `${which} was sent as ${labels[image.mediaType]} but is a ${labels[actual]} image.`,
      );
    }
    return bytes;
  });
}

/** Stores a prompt's images (checked first) and returns the references its event carries. */
export async function storePromptImages(
  db: Db,
  sessionId: string,
  images: readonly PromptImage[],
): Promise<PromptImageRef[]> {
  if (images.length === 0) return [];
  const decoded = decodePromptImages(images);
  const rows = await insertPromptImages(
    db,
    sessionId,
    images.map((image, i) => ({ mediaType: image.mediaType, name: image.name, data: decoded[i]! })),
  );
  return rows.map((row, i) => ({
    id: row.id,
    mediaType: images[i]!.mediaType,
    bytes: row.bytes,
    ...(row.name ? { name: row.name } : {}),
  }));
}
