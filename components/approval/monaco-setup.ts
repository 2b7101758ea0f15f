/**
 * What every Monaco editor of the app shares (the approval review's diff, the file editor): the
 * loader pointed at this origin's copy (`public/monaco/vs`, copied by scripts/copy-monaco.mjs;
 * the loader's default would fetch it from a CDN), the theme that follows the system's colour
 * scheme, and the editor worker kept for the page. Import it from modules loaded with
 * `next/dynamic` and `ssr: false`: it configures the loader on import and touches `window`.
 */
import { loader, type Monaco } from "@monaco-editor/react";
import { useSyncExternalStore } from "react";

loader.config({ paths: { vs: "/monaco/vs" } });

function subscribeScheme(listener: () => void): () => void {
  const query = window.matchMedia("(prefers-color-scheme: dark)");
  query.addEventListener("change", listener);
  return () => query.removeEventListener("change", listener);
}

/** Monaco's theme for the system's colour scheme, following its changes. */
export function useMonacoTheme(): "vs-dark" | "light" {
  const dark = useSyncExternalStore(
    subscribeScheme,
    () => window.matchMedia("(prefers-color-scheme: dark)").matches,
    () => false,
  );
  return dark ? "vs-dark" : "light";
}

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
