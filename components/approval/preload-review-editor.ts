/**
 * Fetches the review's diff editor (its chunk and Monaco itself, from this origin) while a page
 * that will show approvals idles, so the first diff after a page load does not wait seconds for
 * it. Once per page; a failed fetch is tried again by the next call.
 */
let started = false;

/** Starts loading the diff editor at the next idle moment (browser only; idempotent). */
export function preloadReviewEditor(): void {
  if (started || typeof window === "undefined") return;
  started = true;
  const load = () => {
    import("./review-diff")
      .then(() => import("@monaco-editor/react"))
      .then(({ loader }) => loader.init())
      .catch(() => {
        started = false;
      });
  };
  if (typeof window.requestIdleCallback === "function") window.requestIdleCallback(load, { timeout: 1500 });
  else setTimeout(load, 200);
}
