"use client";

/** A prompt's images in the conversation and the history: thumbnails that open the full image. */
export function PromptImages({
  images,
  base,
}: {
  images: readonly { id: string; mediaType: string; name?: string }[];
  base: string;
}) {
  return (
    <ul aria-label="Images in this prompt" className="mt-2 flex flex-wrap gap-2">
      {images.map((image, i) => {
        const src = `${base}/${encodeURIComponent(image.id)}`;
        const name = image.name ?? `image ${i + 1}`;
        return (
          <li key={image.id} data-testid="message-image">
            <a href={src} target="_blank" rel="noopener noreferrer" title={name} className="block">
              <img
                src={src}
                alt={name}
                loading="lazy"
                className="h-24 max-w-48 rounded-md border border-indigo-200 object-cover dark:border-indigo-900"
              />
            </a>
          </li>
        );
      })}
    </ul>
  );
}
