/**
 * Images picked for a prompt: read from pasted or dropped files, checked against the API's
 * limits before anything is sent, and shown as thumbnails (object URLs, revoked on removal).
 */
import { imageLimits } from "./controls-client";

export interface Attachment {
  key: string;
  name: string;
  mediaType: (typeof imageLimits.types)[number];
  /** base64 of the bytes, without a `data:` prefix. */
  data: string;
  bytes: number;
  /** For the thumbnail; revoke with {@link releaseAttachment}. */
  url: string;
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(n < 1024 * 1024 ? 2 : 1)} MB`;
let counter = 0;

/**
 * Turns files into attachments next to `current`. Returns the ones accepted and one message per
 * file refused (wrong type, too large, too many), so the person knows what did not come along.
 */
export async function readAttachments(
  files: readonly File[],
  current: readonly Attachment[],
): Promise<{ added: Attachment[]; errors: string[] }> {
  const added: Attachment[] = [];
  const errors: string[] = [];
  let count = current.length;
  let total = current.reduce((n, a) => n + a.bytes, 0);
  for (const file of files) {
    const name = file.name || "pasted image";
    const type = imageLimits.types.find((t) => t === file.type);
    if (!type) {
      errors.push(`${name}: only PNG, JPEG, GIF and WebP images can be attached${file.type ? ` (this is ${file.type})` : ""}.`);
      continue;
    }
    if (file.size > imageLimits.maxBytes) {
      errors.push(`${name} is ${mb(file.size)}; an image may have at most ${mb(imageLimits.maxBytes)}.`);
      continue;
    }
    if (count >= imageLimits.maxCount) {
      errors.push(`${name} was not added: a prompt may carry at most ${imageLimits.maxCount} images.`);
      continue;
    }
    if (total + file.size > imageLimits.maxTotalBytes) {
      errors.push(`${name} was not added: the images of one prompt may have at most ${mb(imageLimits.maxTotalBytes)} together.`);
      continue;
    }
    const data = await toBase64(file);
    count += 1;
    total += file.size;
    added.push({ key: `att-${++counter}`, name, mediaType: type, data, bytes: file.size, url: URL.createObjectURL(file) });
  }
  return { added, errors };
}

export function releaseAttachment(attachment: Attachment): void {
  URL.revokeObjectURL(attachment.url);
}

async function toBase64(file: Blob): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  const step = 0x8000;
  for (let i = 0; i < bytes.length; i += step) binary += String.fromCharCode(...bytes.subarray(i, i + step));
  return btoa(binary);
}

/** The image files of a paste or drop (files first; a pasted screenshot is an item of kind "file"). */
export function imageFilesOf(data: DataTransfer | null): File[] {
  if (!data) return [];
  const files = [...data.files];
  if (files.length > 0) return files;
  return [...data.items].flatMap((item) => {
    if (item.kind !== "file") return [];
    const file = item.getAsFile();
    return file ? [file] : [];
  });
}
