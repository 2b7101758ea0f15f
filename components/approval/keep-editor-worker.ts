import type { Monaco } from "@monaco-editor/react";

/** The empty model that keeps Monaco's editor worker; never shown, never synced to the worker. */
const keeperUri = "inmemory://conduit/keep-editor-worker";

/**
 * Keeps Monaco's editor worker (the one that computes a diff) for the page's life. Monaco stops
 * that worker as soon as the page holds no text model, so each approval card that unmounted its
 * diff took the worker with it and the next card started a new one: a traced run of
 * `bench browser-turn` saw both pages start a worker on every approval, 100–580 ms of a core each
 * (its bootstrap and `editor.worker.js` evaluated again), with the diff's colours waiting for it.
 * One empty model held from the first editor on keeps the worker; Monaco still stops it after
 * five idle minutes and starts it again when needed. Idempotent: call it from every `onMount`.
 */
export function keepEditorWorker(monaco: Monaco): void {
  const uri = monaco.Uri.parse(keeperUri);
  if (!monaco.editor.getModel(uri)) monaco.editor.createModel("", "plaintext", uri);
}
